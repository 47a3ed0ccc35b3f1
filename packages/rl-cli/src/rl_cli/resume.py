"""What `rl resume` reads back from a run directory: the recorded request and the newest usable
checkpoint, checked against the run being rebuilt; and the atomic write that keeps every file
a reader may open whole."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from rl_cli.checkpoint import ResumePoint, latest_checkpoint
from rl_cli.errors import UserError
from rl_cli.machine import MACHINE_KEYS, machine_record, started_machine
from rl_cli.request import RunRequest
from rl_cli.rundir import read_run_config


def check_processes(record: dict[str, Any]) -> None:
    """A run resumes with as many processes as it ran with (each holds its share of members)."""
    import jax

    ran = record.get("process_count", 1)
    if ran != jax.process_count():
        raise UserError(f"this run trained with {ran} process(es); resume it with the same "
                        f"number (now {jax.process_count()}: pass the same --coordinator/"
                        "--num-processes/--process-id to each)")


def resume_request(run_dir: Path, total_timesteps: int | None = None,
                   progress: bool = True, watchdog_seconds: float | None = None) -> RunRequest:
    """The `RunRequest` recorded in `run_dir/config.json` (a run started by `rl run`), with a new
    total of environment steps if given."""
    if not run_dir.is_dir():
        what = "is a file, not a directory" if run_dir.exists() else "does not exist"
        raise UserError(f"run directory '{run_dir}' {what}; pass the directory of an `rl run` "
                        "(runs/<algo>-<env>-<time>)")
    record = read_run_config(run_dir, keys=()).get("request")
    if not isinstance(record, dict):
        raise UserError(f"'{run_dir}/config.json' records no request: it was not written by "
                        "`rl run` or `rl sweep` (an `rl evolve` run continues with "
                        "`rl evolve --resume`)")
    try:
        req = RunRequest(**record)
    except TypeError as e:
        raise UserError(f"'{run_dir}/config.json' records a request this version cannot read "
                        f"({e})") from None
    req.logdir, req.run_name = run_dir.parent, run_dir.name
    req.meta_params = None if req.meta_params is None else Path(req.meta_params)
    req.progress = progress
    if watchdog_seconds is not None:
        req.watchdog_seconds = watchdog_seconds
    if total_timesteps is not None:
        req.total_timesteps = total_timesteps
    return req


def resume_point(run_dir: Path, algo: Any, keys: Any, hp: Any, info: dict[str, Any],
                 console: Console) -> ResumePoint:
    """The newest usable checkpoint of `run_dir`, checked against the rebuilt run."""
    import jax

    like = jax.eval_shape(jax.vmap(algo.init), keys, hp)
    state, header, path = latest_checkpoint(
        run_dir, like, warn=lambda line: console.print(line, style="bold yellow", markup=False))
    for key in ("algo", "env", "num_members"):
        if header.get(key) != info[key]:
            raise UserError(f"{path} belongs to another run ({key} {header.get(key)!r}, this "
                            f"run's {info[key]!r})")
    done, total = state.updates_done, algo.num_updates
    if done > total:
        raise UserError(f"{path} is at update {done}, past this run's {total} updates; pass a "
                        "--total-timesteps of at least what the run has already done")
    if done == total and (run_dir / "summary.json").is_file():
        raise UserError(f"'{run_dir}' has finished all its {total} updates; to train further "
                        "pass a larger --total-timesteps")
    console.print(f"resuming from {path} (update {done}/{total})")
    return ResumePoint(state, header, path)


# config.json's fields a resume may change: the budget (`--total-timesteps`), where the directory
# lies, the session's own settings (its `parallelism`, `mesh_devices`), and the record of the
# machine (`MACHINE_KEYS`: the one the run started on, kept by `resumed_record`) and of the
# sessions. Top-level fields, and fields of the sections named.
FREE = frozenset({"command", "resumed", "parallelism", "mesh_devices", "num_updates",
                  "steps_per_member", *MACHINE_KEYS})
FREE_IN = {"config": frozenset({"total_timesteps"}),
           "request": frozenset({"total_timesteps", "progress", "watchdog_seconds", "logdir",
                                 "run_name", "track"}),
           "sweep_request": frozenset({"total_timesteps", "watchdog_seconds", "track"})}


def whole_chunks(record: dict[str, Any], total: int) -> tuple[int, str | None]:
    """`total` environment steps per member rounded up to a whole number of the run's
    chunks (a resumed run keeps its chunk length, so its updates must be a multiple of it), and
    a line saying so when it moved; the record (config.json) says the steps per update and the
    chunk length."""
    spu = record.get("steps_per_update")
    chunk = record.get("log_every_updates") or (record.get("sweep_request") or {}).get(
        "log_every")
    if not (isinstance(spu, int) and isinstance(chunk, int) and spu >= 1 and chunk >= 1):
        return total, None
    chunks = max(1, math.ceil(total / (spu * chunk)))  # never fewer steps than asked
    rounded = chunks * chunk * spu
    if rounded == total:
        return total, None
    return rounded, (f"--total-timesteps {total:,} rounded to {rounded:,}: {chunks * chunk:,} "
                     f"updates of {spu:,} steps, in whole chunks of the run's {chunk} updates")


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A config.json record without the fields a resume may change (`FREE`, `FREE_IN`): what a
    checkpoint's header keeps, so that `rl resume` notices an edited config.json."""
    return {k: {f: x for f, x in v.items() if f not in FREE_IN[k]}
            if k in FREE_IN and isinstance(v, dict) else v
            for k, v in record.items() if k not in FREE}


def _changes(now: Any, then: Any, at: str = "", added: Any = None) -> list[str]:
    """The fields of `now` that differ from what the checkpoint recorded (`then`); a top-level
    field it did not record (one another version writes) is not a change, a key added inside a
    recorded section is where `added(path)` says so (default: everywhere, as a `--set` added
    to `request.sets` by editing config.json)."""
    if isinstance(now, dict) and isinstance(then, dict):
        grows = at and (added is None or added(at))
        keys = set(then) | set(now) if grows else set(then)
        return [c for k in sorted(keys, key=str)
                for c in _changes(now.get(k), then.get(k), f"{at}.{k}" if at else str(k), added)]
    return [] if now == then else [f"{at}: {then!r} -> {now!r}"]


def _listed(changes: list[str]) -> str:
    more = f" and {len(changes) - 3} more" if len(changes) > 3 else ""
    return "; ".join(changes[:3]) + more


def check_unchanged(run_dir: Path, point: ResumePoint) -> None:
    """A UserError naming the fields of config.json edited since the checkpoint was written:
    `rl resume` rebuilds the run from the request it recorded and would silently undo them."""
    then = point.header.get("record")
    if not isinstance(then, dict):
        return  # a checkpoint that records no config (written before it was kept)
    changes = _changes(comparable(read_run_config(run_dir, keys=())), then)
    if changes:
        raise UserError(f"'{run_dir}/config.json' was edited after its checkpoint was written "
                        f"({_listed(changes)}): `rl resume` continues the run as "
                        "recorded; restore the file, or start a new run with the settings you "
                        "want (`rl run --set ...`)")


def check_rebuilt(point: ResumePoint, record: dict[str, Any]) -> None:
    """A UserError naming what this version of the code builds differently (`record`, the
    config.json it would write) from the run that wrote `point` (a preset or a default changed
    since): continuing would train the rest of the run with other settings than its start. A
    field this version adds to a section (a new config field, a new request option) is not a
    change, a key added to the environment's keywords (a preset's new `env` default) is."""
    then = point.header.get("record")
    if not isinstance(then, dict):
        return  # a checkpoint that records no config (written before it was kept)
    refuse_rebuilt(comparable(record), then, point.path, "config.json")


def refuse_rebuilt(now: dict[str, Any], then: dict[str, Any], wrote: Path, names: str) -> None:
    """The UserError of `check_rebuilt` (and of `rl evolve --resume`) for a run whose settings as
    this version builds them (`now`) differ from those recorded in `wrote` (`then`); `names` is
    the run's file that lists them. Compared as written to JSON (tuples become lists)."""
    changes = _changes(json.loads(json.dumps(now)), then, added=lambda at: at == "env_kwargs")
    if changes:
        raise UserError(f"this version of the code builds the run differently from the one that "
                        f"wrote {wrote} ({_listed(changes)}): continuing would train the "
                        "rest of it with other settings; restore the code it started with (its "
                        f"{names} names the settings), or start a new run")


def checked_point(resume_dir: Path | None, algo: Any, keys: Any, hp: Any, info: dict[str, Any],
                  console: Console) -> ResumePoint | None:
    """Where a training command starts: None for a new run, else `resume_dir`'s newest usable
    checkpoint (`resume_point`), refused if config.json was edited since (`check_unchanged`)."""
    if resume_dir is None:
        return None
    point = resume_point(resume_dir, algo, keys, hp, info, console)
    check_unchanged(resume_dir, point)
    return point


def write_config(run_dir: Path | None, record: dict[str, Any], point: ResumePoint | None) -> None:
    """Writes the run's config.json (`record`; for a resumed run with how it started and every
    resume, `resumed_record`, merged into `record` in place: the caller's later reads of the
    starting machine rely on it), on the process that writes files (`run_dir` set)."""
    if run_dir is None:
        return
    if point is not None:
        record.update(resumed_record(run_dir, point))
    write_atomic(run_dir / "config.json", json.dumps(record, indent=2))


def resumed_record(run_dir: Path, point: ResumePoint) -> dict[str, Any]:
    """config.json's fields of a resumed run: the command and the machine that started it
    (`rl_cli.machine`), and every resume with its own command and machine."""
    old = read_run_config(run_dir, keys=())
    return {"command": old.get("command"), **started_machine(old),
            "resumed": old.get("resumed", []) + [
                {"from_update": point.updates_done, "command": sys.argv, **machine_record()}]}


def write_atomic(path: Path, text: str) -> None:
    """Writes `text` to `path` through a temporary file and a rename: readers see the old file
    or the new one, never half of one."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError as e:  # named by the file the user knows, not the temporary one
        tmp.unlink(missing_ok=True)
        raise OSError(e.errno, e.strerror, str(path)) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
