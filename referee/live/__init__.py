"""The live table: the event loop, journal, replay, config, the host's answers and the service."""
