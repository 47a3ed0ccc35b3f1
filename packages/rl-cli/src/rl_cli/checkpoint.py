"""Full-state checkpoints of a multi-member run, and what decides when to write them.

A checkpoint is a `rl_core.MembersState`: every member's whole carry (parameters, optimiser
state, environment states, observation statistics, replay buffer, PRNG keys, update counters) and
every chunk's metrics so far, at a chunk boundary. Resuming from it feeds the same compiled chunk
program the same inputs, so the rest of the run is bitwise the one that was interrupted.

File format (`checkpoints/updates-<N>.ckpt`), one self-checking file per checkpoint:

    b"RLCKPT1\\n" | 8-byte little-endian header length | header (JSON) | payload

The payload is Equinox's leaf serialisation (`eqx.tree_serialise_leaves`: each leaf as `.npy`
bytes, in tree order) of `{"carry": ..., "metrics": ...}`; the header records the update count,
the run it belongs to, every leaf's shape and dtype, the payload's length and its SHA-256. Why
Equinox's serialisation and not orbax: the carry of a run is gathered on one host between chunks
anyway (`rl_core.to_host`, which also serves the final parameters), and one plain file that any
process with numpy can read, checked by a hash, is the simplest thing that is atomic and
verifiable; orbax earns its weight when a carry is too large for one host and each host must
write its own shards, which no run here needs yet (members are independent, so a run that large
is better split into several runs).

Writes are atomic: the bytes go to a temporary file in the same directory, are flushed to disk,
and the file is renamed over its final name, so a crash at any instant leaves the previous
checkpoint whole. The two newest are kept; loading takes the newest that passes its checks and
names any it had to skip.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import struct
import time
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from rl_cli import timings
from rl_cli.errors import UserError

MAGIC = b"RLCKPT1\n"
FOLDER = "checkpoints"
KEEP = 2
# Exit codes of a run stopped by a signal after saving, as a shell reports a process killed by it.
SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143}
# One Ctrl-C can arrive as several SIGINTs: a terminal signals the whole foreground process group
# and `uv run`, which is in it, forwards its copy to `rl` as well (measured 0.2 s after the
# first). Copies within this many seconds of the first signal are that same Ctrl-C; a SIGINT
# after it is a deliberate second one and aborts at once.
REPEAT_WINDOW_SECONDS = 1.5


class CorruptCheckpoint(ValueError):
    """A checkpoint file that is truncated, altered or not a checkpoint."""


class Interrupted(Exception):
    """A run stopped by SIGINT/SIGTERM after writing its checkpoint (`path`)."""

    def __init__(self, signum: int, path: Path | None):
        self.signum, self.path = signum, path
        super().__init__(signal.Signals(signum).name)

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return SIGNAL_EXIT.get(signal.Signals(self.signum), 128 + self.signum)


def checkpoint_path(run_dir: Path, updates_done: int) -> Path:
    return run_dir / FOLDER / f"updates-{updates_done:09d}.ckpt"


def _leaf_specs(tree: Any) -> list[list[Any]]:
    import jax

    return [[list(np.shape(x)), str(np.dtype(x.dtype))] for x in jax.tree.leaves(tree)]


def write_checkpoint(run_dir: Path, state: Any, info: dict[str, Any]) -> Path:
    """Writes `state` (a `MembersState` of host arrays) atomically as the checkpoint at its
    update count, with `info` (algorithm, environment, members, elapsed time) in the header;
    removes all but the `KEEP` newest. Returns the file's path."""
    import equinox as eqx

    tree = {"carry": state.carry, "metrics": state.metrics}
    buf = io.BytesIO()
    eqx.tree_serialise_leaves(buf, tree)
    payload = buf.getvalue()
    fields = {
        **info, "updates_done": int(state.updates_done),
        "metrics": {k: str(np.dtype(v.dtype)) for k, v in state.metrics.items()},
        "leaves": _leaf_specs(state.carry), "payload_bytes": len(payload),
    }
    header = json.dumps({**fields, "sha256": _digest(fields, payload)}).encode()
    path = checkpoint_path(run_dir, state.updates_done)
    path.parent.mkdir(exist_ok=True)
    tmp = path.with_name(f".tmp-{os.getpid()}-{path.name}")
    try:
        with open(tmp, "wb") as f:
            f.write(MAGIC + struct.pack("<Q", len(header)) + header + payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    for old in list_checkpoints(run_dir)[KEEP:]:
        old.unlink(missing_ok=True)
    return path


def _digest(fields: dict[str, Any], payload: bytes) -> str:
    """SHA-256 of the header's fields (canonical JSON) and the payload: a change to either, such
    as an update count or a leaf shape, is caught before anything is loaded."""
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode() + payload).hexdigest()


def list_checkpoints(run_dir: Path) -> list[Path]:
    """The run's checkpoint files, newest (most updates) first; temporary files are not listed."""
    folder = run_dir / FOLDER
    if not folder.is_dir():
        return []
    return sorted(folder.glob("updates-*.ckpt"), reverse=True)


def read_header(path: Path) -> tuple[dict[str, Any], bytes]:
    """The header and the verified payload of a checkpoint file, or CorruptCheckpoint saying
    what is wrong with it (truncated, altered, not a checkpoint)."""
    data = path.read_bytes()
    if not data.startswith(MAGIC):
        raise CorruptCheckpoint("not a checkpoint file (wrong magic bytes)")
    if len(data) < len(MAGIC) + 8:
        raise CorruptCheckpoint("truncated inside its header")
    (n,) = struct.unpack("<Q", data[len(MAGIC):len(MAGIC) + 8])
    start = len(MAGIC) + 8
    try:
        header = json.loads(data[start:start + n])
        fields = {k: v for k, v in header.items() if k != "sha256"}
        expected = int(header["payload_bytes"])
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError, KeyError, TypeError,
            ValueError):
        raise CorruptCheckpoint("truncated or damaged header") from None
    payload = data[start + n:]
    if len(payload) != expected:
        raise CorruptCheckpoint(f"truncated: {len(payload):,} of its {expected:,} payload bytes")
    if _digest(fields, payload) != header.get("sha256"):
        raise CorruptCheckpoint("its contents do not match their SHA-256 (altered or damaged)")
    return header, payload


def read_checkpoint(path: Path, carry_like: Any) -> tuple[Any, dict[str, Any]]:
    """The `MembersState` stored in `path`, loaded into the structure of `carry_like` (abstract
    `[M]` carry: `jax.ShapeDtypeStruct` leaves), and the header. A file whose leaves do not match
    `carry_like` (another algorithm, config or member count) is a UserError."""
    import equinox as eqx
    import jax

    from rl_core import MembersState

    header, payload = read_header(path)
    if header["leaves"] != _leaf_specs(carry_like):
        raise UserError(f"{path} does not match this run's training state (its arrays differ "
                        "from what the run's config builds: was config.json edited, or was it "
                        "written by another version?)")
    m, done = len(jax.tree.leaves(carry_like)[0]), int(header["updates_done"])
    metrics_like = {k: jax.ShapeDtypeStruct((m, done), np.dtype(d))
                    for k, d in header["metrics"].items()}
    like = {"carry": carry_like, "metrics": metrics_like}
    try:
        tree = eqx.tree_deserialise_leaves(io.BytesIO(payload), like)
    except Exception as e:  # the hash matched, so this is a file written by something else
        raise CorruptCheckpoint(f"unreadable payload ({type(e).__name__}: {e})") from None
    tree = jax.tree.map(np.asarray, tree)
    if _leaf_specs(tree) != _leaf_specs(like):
        raise CorruptCheckpoint("its arrays do not have the shapes its header states")
    return MembersState(tree["carry"], done, tree["metrics"]), header


def latest_checkpoint(run_dir: Path, carry_like: Any,
                      warn: Any = print) -> tuple[Any, dict[str, Any], Path]:
    """The newest readable checkpoint of `run_dir`; a damaged newer one is skipped with a line
    through `warn` that names it. None readable is a UserError."""
    for stale in (run_dir / FOLDER).glob(".tmp-*"):  # left by a process killed mid-write
        stale.unlink(missing_ok=True)
    paths = list_checkpoints(run_dir)
    if not paths:
        raise UserError(f"'{run_dir}' has no checkpoint ({FOLDER}/updates-*.ckpt): the run "
                        "stopped before its first checkpoint; start it again with `rl run`")
    problems = []
    for path in paths:
        try:
            state, header = read_checkpoint(path, carry_like)
        except CorruptCheckpoint as e:
            problems.append(f"{path}: {e}")
            warn(f"checkpoint {path} is unusable ({e}); trying the previous one")
            continue
        return state, header, path
    raise UserError(f"no usable checkpoint in '{run_dir / FOLDER}': " + "; ".join(problems))


class Checkpointer:
    """`rl_core.Checkpointing` for the CLI: a checkpoint every `every_updates` updates, every
    `every_seconds` of training, at the end, and at the first chunk boundary after SIGINT or
    SIGTERM, after which it raises `Interrupted` (the run then exits 130/143; a signal during
    the last chunk lets the run finish). `on_eval` is called with the state every `eval_every`
    updates (periodic evaluation); `run_dir` None (processes other than 0) writes nothing."""

    def __init__(self, run_dir: Path | None, info: dict[str, Any], every_updates: int = 0,
                 every_seconds: float = 0.0, eval_every: int = 0, on_eval: Any = None):
        self.run_dir, self.info = run_dir, info
        self.every_updates, self.every_seconds = every_updates, every_seconds
        self.eval_every, self.on_eval = eval_every, on_eval
        self.last_time = self.started = time.monotonic()
        self.offset = 0.0
        self.signum: int | None = None
        self.last_path: Path | None = None
        self._saving = False

    def start_clock(self, elapsed_before: float = 0.0) -> None:
        """Training starts now, after `elapsed_before` seconds in earlier sessions of the run
        (recorded in each checkpoint as `elapsed`)."""
        self.last_time = self.started = time.monotonic()
        self.offset = elapsed_before

    def due(self, updates_done: int, final: bool) -> bool:
        self._saving = (final or self.signum is not None
                        or bool(self.every_updates and updates_done % self.every_updates == 0)
                        or bool(self.every_seconds
                                and time.monotonic() - self.last_time >= self.every_seconds))
        evaluate = bool(self.eval_every and updates_done % self.eval_every == 0)
        return self._saving or evaluate

    def save(self, state: Any) -> None:
        stopping = self.signum is not None
        if not stopping and self.on_eval is not None and self.eval_every \
                and state.updates_done % self.eval_every == 0:
            self.on_eval(state)  # skipped when a signal asks to stop: the checkpoint comes first
        if not self._saving:
            return
        if self.run_dir is not None:
            timings.mark("training")
            elapsed = self.offset + time.monotonic() - self.started
            self.last_path = write_checkpoint(self.run_dir, state,
                                              {**self.info, "elapsed": elapsed})
            timings.mark("checkpoint")
        self.last_time = time.monotonic()
        if stopping and state.updates_done < self.info["num_updates"]:
            raise Interrupted(self.signum, self.last_path)  # type: ignore[arg-type]

    def __enter__(self) -> Checkpointer:
        """Catches SIGINT and SIGTERM: the first asks for a checkpoint and a stop at the next
        chunk boundary; copies of it within `REPEAT_WINDOW_SECONDS` are ignored, and a SIGINT
        after that window stops at once (KeyboardInterrupt), keeping the previous checkpoint."""
        self._previous = {s: signal.getsignal(s) for s in SIGNAL_EXIT}
        first_at = [0.0]

        def handler(signum: int, frame: Any) -> None:
            now = time.monotonic()
            if signum != signal.SIGINT:  # SIGTERM: stop as asked, and exit 143
                self.signum = signum
            elif self.signum is None:
                self.signum, first_at[0] = signum, now
            elif self.signum != signal.SIGINT or now - first_at[0] > REPEAT_WINDOW_SECONDS:
                raise KeyboardInterrupt  # a deliberate Ctrl-C, not a copy of the first

        for s in SIGNAL_EXIT:
            signal.signal(s, handler)
        return self

    def __exit__(self, *exc: object) -> None:
        """Restores the previous handlers; after a caught signal the SIGINT handler stays, so
        that a copy of that Ctrl-C arriving after the stop (`uv run`'s, while the process
        reports its checkpoint) is ignored as well."""
        for s, h in self._previous.items():
            if not (s == signal.SIGINT and self.signum is not None):
                signal.signal(s, h)


def check_cadence(every_updates: int, minutes: float, eval_every: int, chunk_len: int,
                  num_updates: int) -> None:
    """`--checkpoint-every` and `--eval-every` count updates at chunk boundaries: each must be 0
    (off) or a positive multiple of the chunk length; `--checkpoint-minutes` a number >= 0."""
    for flag, value in (("--checkpoint-every", every_updates), ("--eval-every", eval_every)):
        if value < 0 or value % chunk_len:
            raise UserError(f"{flag} {value} must be 0 (off) or a multiple of the chunk length "
                            f"of {chunk_len} updates (this run has {num_updates} updates; set "
                            "the chunk length with --log-every)")
    if eval_every > num_updates:
        raise UserError(f"--eval-every {eval_every} is longer than the run ({num_updates} "
                        f"updates): no evaluation would happen; pick at most {num_updates}, or "
                        "0 for none (the final agents are evaluated anyway: --eval-episodes)")
    if not minutes >= 0 or minutes == float("inf"):
        raise UserError(f"--checkpoint-minutes must be a number >= 0 (0: off), got {minutes}")


def checkpointer_for(run_dir: Path | None, info: dict[str, Any], every_updates: int,
                     minutes: float, eval_every: int = 0, on_eval: Any = None,
                     warn: Any = None) -> Checkpointer:
    """The `Checkpointer` of a command's flags. Several processes (multi-host) checkpoint only at
    counted updates and the end: a clock or a signal could differ between them, and the state is
    gathered from all of them, so every process must stop at the same boundaries (`warn` says so
    when only a time cadence was asked for)."""
    import jax

    seconds = 60.0 * minutes if jax.process_count() == 1 else 0.0
    if jax.process_count() > 1 and minutes and not every_updates and warn is not None:
        warn(f"with {jax.process_count()} processes checkpoints are written only every "
             "--checkpoint-every updates and at the end (not by time or on signals); pass "
             "--checkpoint-every to checkpoint during the run")
    return Checkpointer(run_dir, info, every_updates, seconds, eval_every, on_eval)


class ResumePoint(NamedTuple):
    """Where `rl resume` continues: the state and the file it came from."""

    state: Any
    header: dict[str, Any]
    path: Path

    @property
    def updates_done(self) -> int:
        return int(self.state.updates_done)

    @property
    def elapsed(self) -> float:
        """Seconds of training before this checkpoint, over all earlier sessions."""
        return float(self.header.get("elapsed", 0.0))
