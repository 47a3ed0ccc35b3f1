"""A run directory as the commands share it: the one check that a path is a directory `rl run`
(or `rl sweep`) wrote and holds the files a command needs, and its recorded `config.json` (`rl
eval`, `rl render`, `rl plot` and `rl resume` all start here, so a wrong path reads the same way
in each); and the lock a training command holds on it, so that two processes never train into
one directory and a run still training is not evaluated as if it were finished; and the checks
on where a new run will be written (`check_output`: the run name and the log directory), made
before anything compiles.
"""

from __future__ import annotations

import json
import os
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

from rl_cli.errors import UserError

WROTE = "pass a directory that `rl run` wrote (runs/<algo>-<env>-<time>)"
MAX_NAME_LENGTH = 200  # leaves room for the `-N` suffix within the usual 255-byte file names


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


def check_run_name(run_name: str | None) -> None:
    """A run name is one directory name inside the log directory, never a path: no separators,
    no `..`, not empty, no control characters, not too long."""
    if run_name is None:
        return
    fix = "pass a plain name such as --run-name my-run"
    if not run_name.strip():
        raise UserError(f"--run-name is empty; {fix} (or leave it out for algo-env-time)")
    if "/" in run_name or "\\" in run_name:
        raise UserError(f"--run-name '{run_name}' contains a path separator: it names a "
                        f"directory inside --logdir, not a path; {fix} (and choose the "
                        "parent with --logdir)")
    if ".." in run_name or run_name == ".":
        raise UserError(f"--run-name '{run_name}' contains '..' or is '.', which would leave "
                        f"--logdir; {fix}")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") for c in run_name):
        raise UserError(f"--run-name {run_name!r} contains control or line-break characters; "
                        f"{fix}")
    if len(run_name.encode()) > MAX_NAME_LENGTH:
        raise UserError(f"--run-name is {len(run_name.encode())} bytes long, more than "
                        f"{MAX_NAME_LENGTH}; {fix}")


def check_logdir(logdir: Path) -> None:
    """`logdir` is a directory this process can create run directories in, or can be created:
    its nearest existing ancestor is a writable directory. Nothing is written."""
    if "\0" in str(logdir):
        raise UserError(f"--logdir {str(logdir)!r} contains a NUL character; pass a directory")
    if logdir.exists() and not logdir.is_dir():
        raise UserError(f"--logdir '{logdir}' is a file, not a directory; pass a directory "
                        "(it is created if missing), e.g. --logdir runs")
    ancestor = logdir
    while not ancestor.exists():
        if ancestor.is_symlink():
            raise UserError(f"--logdir '{logdir}': '{ancestor}' is a broken symbolic link; "
                            "remove it or pass another directory")
        parent = ancestor.parent
        if parent == ancestor:
            break
        ancestor = parent
    if ancestor.exists() and not ancestor.is_dir():
        raise UserError(f"--logdir '{logdir}' cannot be created: '{ancestor}' is a file, not a "
                        "directory; pass a directory under an existing directory")
    if ancestor.is_dir() and not _writable(ancestor):
        what = "--logdir" if ancestor == logdir else f"--logdir '{logdir}' cannot be created:"
        raise UserError(f"{what} '{ancestor}' is not writable; pass a directory you can write "
                        "to (e.g. --logdir runs) or fix its permissions")


def _writable(directory: Path) -> bool:
    """Whether a directory can be created in `directory`: the permission bits (which root
    ignores), then a real probe (an empty directory, removed at once), which also catches
    read-only file systems and pseudo file systems such as /proc."""
    if not os.access(directory, os.W_OK | os.X_OK):
        return False
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".rl-probe-", dir=directory))
    except OSError:
        return False
    return True


def check_output(logdir: Path, run_name: str | None) -> None:
    """Every check on where a run will be written, before anything compiles or is written."""
    check_run_name(run_name)
    check_logdir(logdir)
