"""The simulator: a virtual table (renderer, table camera, bots) and the demo."""
