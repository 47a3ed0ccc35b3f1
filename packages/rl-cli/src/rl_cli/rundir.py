"""A run directory as the commands share it: the one check that a path is a directory `rl run`
(or `rl sweep`) wrote and holds the files a command needs, and its recorded `config.json` (`rl
eval`, `rl render`, `rl plot` and `rl resume` all start here, so a wrong path reads the same way
in each); and the lock a training command holds on it, so that two processes never train into
one directory and a run still training is not evaluated as if it were finished.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from rl_cli.errors import UserError

WROTE = "pass a directory that `rl run` wrote (runs/<algo>-<env>-<time>)"


def read_run_config(path: Path, needs: tuple[str, ...] = (), why: str = WROTE,
                    keys: tuple[str, ...] = ("algo", "env", "config", "seeds")) -> dict[str, Any]:
    """`path/config.json` as a dict, once `path` is a directory holding it and every file in
    `needs` (else a UserError: `'{path}' has no {name}: {why}`) and the record has `keys`."""
    if not path.is_dir():
        raise UserError(f"run directory '{path}' does not exist; {WROTE}")
    for name in ("config.json", *needs):
        if not (path / name).is_file():
            raise UserError(f"'{path}' has no {name}: {why}")
    try:
        record = json.loads((path / "config.json").read_text())
        for key in keys:
            record[key]  # noqa: B018  (presence check)
        return dict(record)
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise UserError(f"{path / 'config.json'} is not a config written by `rl run` "
                        f"(missing or unreadable: {e})") from None


LOCK = ".lock"


class RunLock:
    """An exclusive lock on a run directory while a command trains in it (`with RunLock(dir)`):
    a second `rl run`/`rl resume`/`rl sweep` of the same directory is a UserError naming the
    holder's pid. The lock is the operating system's (`flock` on `dir/.lock`), released when the
    holder closes it or dies, so a lock left by a killed process is free for the next one."""

    def __init__(self, run_dir: Path):
        self.run_dir, self.fd = run_dir, -1

    def __enter__(self) -> RunLock:
        import fcntl

        fd = os.open(self.run_dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise UserError(busy(self.run_dir, holder(self.run_dir))) from None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except BaseException:
            os.close(fd)  # releases the lock
            raise
        self.fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # releases the lock; the file stays (removing it would race)
            self.fd = -1


def busy(run_dir: Path, pid: str) -> str:
    return (f"'{run_dir}' is in use by another rl process (pid {pid}): wait for it to end, or "
            "stop it (its checkpoint is kept) and try again")


def check_free(run_dir: Path) -> None:
    """A UserError naming the holder when another process trains in `run_dir`."""
    pid = in_use(run_dir)
    if pid is not None:
        raise UserError(busy(run_dir, pid))


def holder(run_dir: Path) -> str:
    """The pid recorded by the process that holds (or last held) the directory's lock."""
    try:
        return (run_dir / LOCK).read_text().strip() or "unknown"
    except OSError:
        return "unknown"


def in_use(run_dir: Path) -> str | None:
    """The pid of the process training in `run_dir` (holding its lock), or None."""
    import fcntl

    try:
        fd = os.open(run_dir / LOCK, os.O_RDONLY)
    except OSError:
        return None  # never locked: nothing trains here
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return holder(run_dir)
    finally:
        os.close(fd)
    return None


def check_not_training(run_dir: Path) -> None:
    """A UserError when a training command holds `run_dir`'s lock: its agents are not final
    (a `params.eqx`, if any, belongs to an earlier session)."""
    pid = in_use(run_dir)
    if pid is not None:
        raise UserError(f"'{run_dir}' is still training (pid {pid}): its agents are not final; "
                        "wait for it to end")
