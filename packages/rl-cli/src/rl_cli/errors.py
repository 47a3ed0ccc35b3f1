"""User mistakes end with one line and a non-zero exit, never a traceback."""

from __future__ import annotations


class UserError(ValueError):
    """Bad input from the command line; the message says what is wrong and how to fix it."""


class RunHalted(RuntimeError):
    """A run stopped on purpose before its end (`--halt-on-nan`); the message says why and what
    was kept."""


# Exit codes: 2 = bad input (as click uses for usage errors), 3 = the watchdog fired,
# 4 = the run was halted (`--halt-on-nan` saw NaN/inf).
EXIT_USER_ERROR = 2
EXIT_WATCHDOG = 3
EXIT_HALTED = 4


class RunStopped(RuntimeError):
    """A run stopped by SIGINT/SIGTERM after saving a checkpoint; the message says where and how
    to continue, `exit_code` is the shell's for that signal (130, 143)."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code
