"""The one error type the command line shows as a single line (exit status 2)."""


class UserError(Exception):
    """A mistake the user can fix: a bad file, a bad option, missing hardware."""
