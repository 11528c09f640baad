"""The kiosk's web app: the table's view, its server, guard, phones and sound."""
