"""The game: cards laid, snaps, rulings, the engine and the table script."""
