"""Errors the user can act on."""


class UserError(Exception):
    """A problem the user can fix (bad input file, missing data): printed without a traceback.

    The CLI prints it as ``sqlbench-lmeval COMMAND: error: MESSAGE`` and exits with status 2.
    """
