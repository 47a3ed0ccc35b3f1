"""User mistakes end with one line and a non-zero exit, never a traceback."""

from __future__ import annotations


class UserError(ValueError):
    """Bad input from the command line; the message says what is wrong and how to fix it."""


# Exit codes: 2 = bad input (as click uses for usage errors), 3 = the watchdog fired.
EXIT_USER_ERROR = 2
EXIT_WATCHDOG = 3
