"""The card-table referee: rules engine, table scripts and the command line."""

__version__ = "0.1.0"
