"""The camera's eyes: a card's outline and index read from a frame, the watch over the pile."""
