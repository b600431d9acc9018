"""The error type for mistakes in what a user asked for (as opposed to bugs in napkin)."""


class UserError(Exception):
    """An error in the user's input or options; its message is reported as is."""
