"""Drivers at the edge of the referee: clocks now; buttons, lights and cameras to come."""
