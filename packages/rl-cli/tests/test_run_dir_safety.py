"""A run directory has one trainer at a time, and a run stopped before it saved anything leaves
nothing that looks resumable. As a user meets it: a second `rl resume` of a directory another
process trains in is refused with the holder's pid (and `rl eval`/`rl render` refuse agents that
are not final); a lock left by a SIGKILLed process is taken over; SIGTERM or Ctrl-C (to the
process group of `uv run`, as a terminal sends it) while the program compiles ends in one line
and removes the fresh directory."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import jax
import pytest
from cli_helpers import run_cli

from rl_cli.rundir import RunLock, in_use

REPO = Path(__file__).parents[3]


def _run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"algo": "ppo", "env": "gymnax/CartPole-v1",
                                                 "config": {}, "seeds": [0]}))
    (run / "params.eqx").write_bytes(b"")
    return run


@pytest.mark.parametrize("command, hint", [
    (["resume"], "is in use by another rl process (pid {pid})"),
    (["eval"], "is still training (pid {pid})"),
    (["render"], "is still training (pid {pid})"),
])
def test_a_directory_being_trained_is_refused(command, hint, tmp_path, capsys) -> None:
    run = _run_dir(tmp_path)
    with RunLock(run):
        before = {p.name: p.read_bytes() for p in run.iterdir()}
        code, _, err = run_cli([*command, str(run)], capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and hint.format(pid=os.getpid()) in lines[0], err
    assert {p.name: p.read_bytes() for p in run.iterdir()} == before  # nothing written


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path) -> None:
    run = _run_dir(tmp_path)
    code = ("import sys, time; from pathlib import Path; from rl_cli.rundir import RunLock\n"
            "with RunLock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(600)")
    holder = subprocess.Popen([sys.executable, "-c", code, str(run)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert in_use(run) == str(holder.pid)
        with pytest.raises(Exception, match=f"pid {holder.pid}"), RunLock(run):
            pass
    finally:
        holder.kill()
        holder.wait()
    assert in_use(run) is None
    with RunLock(run):
        assert in_use(run) == str(os.getpid())


def _uv() -> str:
    uv = os.environ.get("UV") or shutil.which("uv")
    assert uv, "uv is not on PATH: the README's commands need it"
    return uv


@pytest.mark.parametrize("how", ["SIGTERM", "Ctrl-C"])
def test_a_signal_while_compiling_leaves_nothing_to_resume(how, tmp_path) -> None:
    """The program is compiled without the persistent cache (seconds for MinAtar PPO), and the
    signal comes as soon as config.json exists: before any checkpoint."""
    run = tmp_path / "run"
    env = {**os.environ, "RL_COMPILE_CACHE_DIR": jax.config.jax_compilation_cache_dir or ""}
    proc = subprocess.Popen(
        [_uv(), "run", "rl", "--no-compile-cache", "run", "--algo", "ppo", "--env",
         "gymnax/Breakout-MinAtar", "--total-timesteps", "200000", "--logdir", str(tmp_path),
         "--run-name", "run", "--no-progress"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, cwd=REPO)
    deadline = time.monotonic() + 300
    while not (run / "config.json").exists() and proc.poll() is None:
        assert time.monotonic() < deadline, "no config.json in 300 s"
        time.sleep(0.01)
    time.sleep(0.2)
    if how == "SIGTERM":
        os.kill(proc.pid, signal.SIGTERM)  # uv forwards it to rl
    else:
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: uv and rl both get it
    out, err = proc.communicate(timeout=300)
    expected = {"SIGTERM": (143, "stopped by SIGTERM"), "Ctrl-C": (130, "stopped by SIGINT")}
    assert proc.returncode == expected[how][0], out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and expected[how][1] in lines[0], err
    assert "before the first checkpoint: nothing to resume" in lines[0], err
    assert not run.exists()


@pytest.mark.parametrize("stop", [KeyboardInterrupt, "Terminated", "RunStopped"])
@pytest.mark.parametrize("fresh", [True, False])
def test_after_a_stop_a_copy_of_the_ctrl_c_is_ignored(stop, fresh, tmp_path,
                                                      monkeypatch) -> None:
    """When `claimed` lets a stop through (a signal, or the checkpointer's stop at a chunk
    boundary), a SIGINT in the next moment is ignored: `uv run` forwards the terminal's Ctrl-C
    a moment after `rl` got its own (later on a loaded CPU), and that copy must not replace the
    stop's one line with a second interruption. A SIGINT after that moment is the user's and
    interrupts as before (a notebook keeps its Ctrl-C); a run that was not stopped gets its
    handlers back at once."""
    from rl_cli import checkpointer
    from rl_cli.errors import RunStopped, Terminated
    from rl_cli.session import claimed

    exc = {"Terminated": Terminated, "RunStopped": RunStopped}.get(stop, stop)
    original = signal.getsignal(signal.SIGINT)  # a pytest-xdist worker ignores SIGINT
    before = signal.default_int_handler  # Python's own, as `rl` starts with
    signal.signal(signal.SIGINT, before)
    for name in ("run", "other"):
        (tmp_path / name).mkdir()
    try:
        with pytest.raises((RunStopped, exc)):
            with claimed(tmp_path / "run", fresh=fresh):
                raise exc("stopped", 130) if exc is RunStopped else exc()
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGINT)  # the copy: ignored
        time.sleep(0.05)
        monkeypatch.setattr(checkpointer, "REPEAT_WINDOW_SECONDS", 0.0)
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)  # the user's own, later
            time.sleep(1.0)
        assert signal.getsignal(signal.SIGINT) is before
        with claimed(tmp_path / "other", fresh=True):
            pass
        assert signal.getsignal(signal.SIGINT) is before
    finally:
        signal.signal(signal.SIGINT, original)


@pytest.mark.parametrize("code, hint", [
    ("ENOSPC", "free some space on that disk"),
    ("EROFS", "read-only: write elsewhere (--logdir)"),
    ("EACCES", "fix its permissions or use another path"),
    ("ENOENT", "does the directory exist, or was it moved or removed?"),
])
def test_a_refused_write_reads_as_one_line_with_what_to_do(code, hint, tmp_path) -> None:
    """What `rl` prints for a read or write the system refuses: the cause, the file, what to
    do; and the command that continues the run only when it stopped a training command whose
    directory holds a checkpoint (`claimed` marks the error so)."""
    import errno

    from rl_cli.errors import describe_os_error

    run = tmp_path / "run"
    number = getattr(errno, code)
    error = OSError(number, os.strerror(number), str(run / "metrics.jsonl"))
    line = describe_os_error(error)
    assert "\n" not in line and os.strerror(number) in line and hint in line, line
    assert f"'{run / 'metrics.jsonl'}'" in line and "rl resume" not in line, line
    error.resume_dir = run  # type: ignore[attr-defined]
    assert describe_os_error(error).endswith(
        f"; then `rl resume {run}` continues from its last checkpoint")


def test_an_edited_config_is_told_from_a_legitimate_resume() -> None:
    """What `rl resume` calls an edit of config.json: a changed or added setting anywhere in
    the recorded sections; not what a resume may change (the budget, the machine, the session's
    own settings), nor a top-level field the checkpoint did not record."""
    from rl_cli.resume import _changes, comparable

    recorded = {"algo": "ppo", "hparams": {"lr": 0.005}, "config": {"total_timesteps": 5},
                "request": {"sets": {}, "devices": None, "total_timesteps": 5}, "command": ["a"]}
    then = comparable(recorded)
    same = {**recorded, "config": {"total_timesteps": 9}, "command": ["b"], "resumed": [{}],
            "request": {"sets": {}, "devices": None, "total_timesteps": 9, "progress": False},
            "steps_per_member": 9, "a_later_field": 1}
    assert _changes(comparable(same), then) == []
    edits = [({"hparams": {"lr": 0.001}}, "hparams.lr: 0.005 -> 0.001"),
             ({"request": {"sets": {"lr": "1e-3"}, "devices": None}}, "request.sets.lr"),
             ({"request": {"sets": {}, "devices": 2}}, "request.devices: None -> 2"),
             ({"algo": "dpo"}, "algo: 'ppo' -> 'dpo'")]
    for change, named in edits:
        found = _changes(comparable({**recorded, **change}), then)
        assert len(found) == 1 and found[0].startswith(named), (change, found)
