"""Full-state checkpoints of a multi-member run (`checkpointer` decides when to write them).

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
import struct
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from rl_cli.errors import UserError

MAGIC = b"RLCKPT1\n"
FOLDER = "checkpoints"
KEEP = 2
TEMP_PREFIX = ".tmp-"  # a checkpoint being written: `.tmp-<pid>-updates-<N>.ckpt`


class CorruptCheckpoint(ValueError):
    """A checkpoint file that is truncated, altered or not a checkpoint."""


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
    tmp = path.with_name(f"{TEMP_PREFIX}{os.getpid()}-{path.name}")
    try:
        write_durably(tmp, MAGIC + struct.pack("<Q", len(header)) + header + payload)
        os.replace(tmp, path)
    except OSError as e:  # e.g. the disk is full: the previous checkpoint stays the newest
        tmp.unlink(missing_ok=True)
        raise OSError(e.errno, e.strerror, str(path)) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    for old in list_checkpoints(run_dir)[KEEP:]:
        old.unlink(missing_ok=True)
    return path


def write_durably(path: Path, data: bytes) -> None:
    """`data` into `path`, flushed to the disk before returning."""
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _digest(fields: dict[str, Any], payload: bytes) -> str:
    """SHA-256 of the header's fields (canonical JSON) and the payload: a change to either, such
    as an update count or a leaf shape, is caught before anything is loaded."""
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode() + payload).hexdigest()


def remove_stale_temporaries(run_dir: Path) -> None:
    """Removes the temporary files of writes a killed process left half done (call it only while
    holding the run directory's lock: another process may be writing one)."""
    folder = run_dir / FOLDER
    if folder.is_dir():
        for stale in folder.glob(f"{TEMP_PREFIX}*"):
            stale.unlink(missing_ok=True)


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
