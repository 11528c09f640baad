"""The `referee` command: one module per command group."""
