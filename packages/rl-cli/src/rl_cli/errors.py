"""User mistakes end with one line and a non-zero exit, never a traceback."""

from __future__ import annotations

import errno


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
EXIT_IO_ERROR = 1  # a read or write the system refused (disk full, read-only, permissions)


class RunStopped(RuntimeError):
    """A run stopped by SIGINT/SIGTERM after saving a checkpoint; the message says where and how
    to continue, `exit_code` is the shell's for that signal (130, 143)."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


class Terminated(BaseException):
    """SIGTERM outside the training loop (which checkpoints on it instead): like Ctrl-C's
    KeyboardInterrupt, it unwinds to `rl`'s one exit path (exit 143)."""


_OS_HINTS = {
    errno.ENOSPC: "free some space on that disk",
    errno.EDQUOT: "free some of your disk quota",
    errno.EROFS: "that file system is read-only: write elsewhere (--logdir)",
    errno.EACCES: "permission denied: fix its permissions or use another path",
    errno.EPERM: "permission denied: fix its permissions or use another path",
    errno.ENOENT: "does the directory exist, or was it moved or removed?",
}


def describe_os_error(e: OSError) -> str:
    """One line for a read or write the system refused: what and where, what to do where that
    is known, and, when it stopped a training command whose directory holds a checkpoint
    (`session.claimed` sets `resume_dir`), the command that continues the run."""
    where = f" ('{e.filename}')" if e.filename else ""
    hint = _OS_HINTS.get(e.errno or 0)
    run = getattr(e, "resume_dir", None)
    then = f"; then `rl resume {run}` continues from its last checkpoint" if run else ""
    return f"{e.strerror or e}{where}" + (f": {hint}" if hint else "") + then
