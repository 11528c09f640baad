"""What the referee learns about one physical table: its button wiring now; the deck and camera to come."""
