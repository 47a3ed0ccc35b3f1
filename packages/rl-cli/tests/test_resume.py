"""Checkpoints and exact resume, as a user meets them: `rl run` in its own process is killed
(SIGKILL: no chance to save) or interrupted (SIGINT: saves at the next chunk boundary, exit 130)
at a random point of training, `rl resume` continues it, and the end is bitwise the run that was
never interrupted: the same parameters (params.eqx byte for byte), the same metrics in
metrics.jsonl (every field but wall-clock times), the same final returns. PPO, PQN, TD3 (whose
carry holds a replay buffer) and IPPO (a multi-agent environment)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli_helpers import rl_process_env, run_cli

# algo, env, total timesteps, updates per chunk (a checkpoint after every chunk)
CASES = {
    "ppo": ("gymnax/CartPole-v1", 40_960, 4),  # 80 updates of 512 steps: 20 chunks
    "pqn": ("gymnax/CartPole-v1", 81_920, 2),  # 40 updates of 2048 steps: 20 chunks
    "td3": ("gymnax/Pendulum-v1", 4_000, 50),  # 1000 updates of 4 steps (replay warm-up inside)
    # three agents batched: 40 updates of 4 envs x 32 steps (384 agent transitions)
    "ippo": ("jaxmarl/MPE_simple_spread_v3", 5_120, 2),
}
# Smaller learning steps than the preset's where they cost most (the carry's shape is what a
# checkpoint must restore, not its size): PQN learns from each rollout in 2 epochs of 4
# minibatches with layers of 64 (the preset: 4 x 16 with 256).
SETS = {"pqn": ["--set", "num_epochs=2", "--set", "num_minibatches=4", "--set", "hidden_size=64"],
        "ippo": ["--set", "num_envs=4", "--set", "num_steps=32"]}
CLOCK_FIELDS = ("seconds", "steps_per_second")


# Runs of these algorithms are compared only with other subprocesses' runs, so they compile with
# full optimisation (`rl_process_env`); PPO's are also compared with runs in this process.
OPTIMISED = {"pqn", "td3", "sweep"}


def _rl(args: list[str], optimised: bool = False, **kw) -> subprocess.Popen:
    env = rl_process_env(optimised)
    code = "import sys; from rl_cli.main import main; main(sys.argv[1:])"
    return subprocess.Popen([sys.executable, "-c", code, *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _args(algo: str, logdir: Path, name: str, every: int = 1) -> list[str]:
    """`rl run` of the case, logging every chunk; with `every` > 1 it checkpoints and evaluates
    greedily every `every` chunks, so a kill can fall between checkpoints (chunks logged after
    the last one are logged again on resume) and evaluating must leave training unchanged."""
    env, steps, chunk = CASES[algo]
    cadence = ["--checkpoint-every", str(chunk * every)]
    if every > 1:
        cadence += ["--eval-every", str(chunk * every)]
    return ["run", "--algo", algo, "--env", env, "--num-seeds", "2", "--total-timesteps",
            str(steps), "--log-every", str(chunk), *cadence, "--eval-episodes", "2",
            "--logdir", str(logdir), "--run-name", name, "--no-progress", *SETS.get(algo, [])]


def _finish(proc: subprocess.Popen, timeout: float = 600) -> tuple[int, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out + err


def _checkpoints(run_dir: Path) -> list[Path]:
    folder = run_dir / "checkpoints"
    return sorted(folder.glob("updates-*.ckpt")) if folder.is_dir() else []


def _updates_saved(run_dir: Path) -> int:
    """The update count of the newest checkpoint (0: none yet); only the two newest are kept."""
    paths = _checkpoints(run_dir)
    return int(paths[-1].stem.split("-")[1]) if paths else 0


def _kill_after(proc: subprocess.Popen, run_dir: Path, updates: int, delay: float,
                signum: int) -> None:
    """Sends `signum` `delay` seconds after the run has checkpointed `updates` updates."""
    deadline = time.monotonic() + 300
    while _updates_saved(run_dir) < updates and proc.poll() is None:
        assert time.monotonic() < deadline, "the run wrote no checkpoint in 300 s"
        time.sleep(0.005)
    time.sleep(delay)
    proc.send_signal(signum)


def _metrics(run_dir: Path, evaluations: bool = True) -> list[dict]:
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in CLOCK_FIELDS} for r in rows
            if evaluations or not r.get("eval")]


def _assert_same_run(run_dir: Path, ref: Path) -> None:
    assert (run_dir / "params.eqx").read_bytes() == (ref / "params.eqx").read_bytes()
    assert _metrics(run_dir, evaluations=False) == _metrics(ref, evaluations=False)
    a, b = (json.loads((d / "summary.json").read_text()) for d in (run_dir, ref))
    for key in ("final_return_per_member", "greedy_eval_return_per_member"):
        assert a[key] == b[key], key


class References:
    """The uninterrupted run of each algorithm, made when a test first asks for it (a tier that
    runs only PPO's cases makes only PPO's)."""

    def __init__(self, logdir: Path):
        self.logdir = logdir

    def __getitem__(self, algo: str) -> Path:
        run_dir = self.logdir / algo
        if not (run_dir / "summary.json").exists():
            code, text = _finish(_rl(_args(algo, self.logdir, algo), algo in OPTIMISED))
            assert code == 0, f"{algo}: {text}"
        return run_dir


@pytest.fixture(scope="module")
def references(tmp_path_factory) -> References:
    return References(tmp_path_factory.mktemp("reference"))


# The stops each algorithm's run meets, in order: the first stops `rl run`, each later one the
# `rl resume` that continued it. Every signal is met by PPO; each carry kind (PPO's, PQN's, and
# TD3's replay buffer) by a graceful stop and by a kill.
STOPS = {"ppo": (signal.SIGTERM, signal.SIGINT, signal.SIGKILL),
         "pqn": (signal.SIGINT, signal.SIGKILL), "td3": (signal.SIGKILL, signal.SIGINT),
         "ippo": (signal.SIGINT, signal.SIGKILL)}


# Every case in the heavy tier: each costs a reference run and 3-4 `rl` processes (PPO's, the
# cheapest, about a minute on 2 cores); the default tier keeps the resume tests of one process.
@pytest.mark.heavy
@pytest.mark.parametrize("algo", sorted(STOPS))
def test_stopped_run_resumes_bitwise(algo, references, tmp_path) -> None:
    """The run checkpoints and evaluates every two chunks (so a kill can fall between
    checkpoints, chunks logged after the newest are logged again on resume, and evaluating must
    leave training unchanged); each signal of `STOPS` stops it a random 0-50 ms after a random
    checkpoint past the one it resumed from: SIGKILL with no chance to save, SIGINT and SIGTERM
    saving at the next chunk boundary and exiting 130 and 143 with the command that continues.
    The last `rl resume` ends bitwise equal to the run that was never stopped."""
    rng = random.Random(f"{algo}-{os.getpid()}-{time.time_ns()}")
    stops = STOPS[algo]
    step = 2 * CASES[algo][2]  # updates between checkpoints
    total = json.loads((references[algo] / "config.json").read_text())["num_updates"]
    run_dir = tmp_path / "run"
    proc = _rl(_args(algo, tmp_path, "run", every=2), algo in OPTIMISED)
    for i, signum in enumerate(stops):
        saved = _updates_saved(run_dir)
        room = max(1, (total - saved) // step // (len(stops) - i + 1))
        at, delay = saved + step * rng.randint(1, room), rng.uniform(0.0, 0.05)
        _kill_after(proc, run_dir, at, delay, signum)
        code, text = _finish(proc)
        where = (f"({signal.Signals(signum).name} {delay * 1e3:.0f} ms after the checkpoint at "
                 f"update {at} of {total}, stop {i + 1} of {len(stops)})")
        if signum == signal.SIGKILL:
            assert code == -signal.SIGKILL, f"the run ended before the kill {where}: {text}"
        else:
            assert code == {signal.SIGINT: 130, signal.SIGTERM: 143}[signum], f"{where}: {text}"
            assert "rl resume" in text and "checkpoint" in text, text
        assert not (run_dir / "summary.json").exists(), where
        if i:
            assert "resuming from" in text, f"{where}: {text}"
        proc = _rl(["resume", str(run_dir), "--no-progress"], algo in OPTIMISED)
    code, text = _finish(proc)
    assert code == 0, text
    assert "resuming from" in text
    _assert_same_run(run_dir, references[algo])


@pytest.mark.heavy
def test_a_full_disk_mid_run_loses_nothing(references, tmp_path, monkeypatch, capsys) -> None:
    """The disk fills while the third checkpoint is written (the writer gets half the bytes
    out, then ENOSPC): one line naming the cause and the resume command, exit 1, no partial
    file left, the second checkpoint the newest; once there is space again, `rl resume` ends
    bitwise equal to the uninterrupted run."""
    import errno

    from rl_cli import checkpoint

    real, calls = checkpoint.write_durably, []

    def fills_up(path: Path, data: bytes) -> None:
        calls.append(path)
        if len(calls) == 3:
            path.write_bytes(data[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, data)

    monkeypatch.setattr(checkpoint, "write_durably", fills_up)
    run_dir = tmp_path / "run"
    code, _, err = run_cli(_args("ppo", tmp_path, "run"), capsys)
    assert code == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "No space left on device" in lines[0], err
    assert f"rl resume {run_dir}" in lines[0], err
    chunk = CASES["ppo"][2]
    assert [p.name for p in (run_dir / "checkpoints").iterdir()] == \
        [p.name for p in _checkpoints(run_dir)], "a partial file was left"
    assert _updates_saved(run_dir) == 2 * chunk
    monkeypatch.undo()
    code, out, err = run_cli(["resume", str(run_dir), "--no-progress"], capsys)
    assert code == 0, out + err
    _assert_same_run(run_dir, references["ppo"])


def test_truncated_checkpoint_falls_back_to_the_previous(references, tmp_path, capsys) -> None:
    """A damaged newest checkpoint is named and skipped; the previous one resumes the run,
    still bitwise; when none is usable the error is one line."""
    run_dir = tmp_path / "run"
    proc = _rl(_args("ppo", tmp_path, "run"))
    _kill_after(proc, run_dir, 3 * CASES["ppo"][2], 0.0, signal.SIGKILL)
    _finish(proc)
    newest, previous = _checkpoints(run_dir)[::-1][:2]
    data = newest.read_bytes()
    newest.write_bytes(data[: len(data) // 2])
    code, out, err = run_cli(["resume", str(run_dir), "--no-progress"], capsys)
    assert code == 0, err
    flat = "".join(out.split())  # the console wraps long lines
    assert f"checkpoint{newest}isunusable(truncated" in flat
    assert f"resumingfrom{previous}" in flat
    _assert_same_run(run_dir, references["ppo"])

    for path in _checkpoints(run_dir):
        path.write_bytes(path.read_bytes()[:100])
    code, out, err = run_cli(["resume", str(run_dir), "--no-progress"], capsys)
    assert code == 2
    assert err.startswith("rl: error: no usable checkpoint") and err.count("\n") == 1, err


def test_resume_refuses_what_it_cannot_continue(references, tmp_path, capsys) -> None:
    """A finished run, a directory that is no run, a total below what is done: one line each."""
    finished = references["ppo"]
    code, _, err = run_cli(["resume", str(finished), "--no-progress"], capsys)
    assert code == 2 and "has finished all its" in err and "--total-timesteps" in err
    code, _, err = run_cli(["resume", str(tmp_path / "nothing")], capsys)
    assert code == 2 and "does not exist" in err
    code, _, err = run_cli(["resume", str(finished), "--total-timesteps", "2048"], capsys)
    assert code == 2 and "past this run's" in err


@pytest.mark.heavy
def test_killed_sweep_resumes_bitwise(tmp_path) -> None:
    """`rl sweep` checkpoints and resumes the same way: its ranking file and metrics come out as
    if it had never stopped."""
    args = ["sweep", "--env", "gymnax/CartPole-v1", "--grid", "lr=1e-3,3e-3", "--num-seeds",
            "2", "--total-timesteps", "20480", "--log-every", "4", "--checkpoint-every", "4",
            "--logdir", str(tmp_path), "--no-progress"]
    ref = _rl([*args, "--run-name", "ref"], "sweep" in OPTIMISED)
    assert _finish(ref)[0] == 0
    proc = _rl([*args, "--run-name", "run"], "sweep" in OPTIMISED)
    _kill_after(proc, tmp_path / "run", 4 * random.randint(1, 5), 0.0, signal.SIGKILL)
    code, text = _finish(proc)
    assert code == -signal.SIGKILL, text
    code, text = _finish(_rl(["resume", str(tmp_path / "run"), "--no-progress"],
                             "sweep" in OPTIMISED))
    assert code == 0, text
    assert (tmp_path / "run" / "sweep.csv").read_text() == (tmp_path / "ref" / "sweep.csv")\
        .read_text()
    assert _metrics(tmp_path / "run") == _metrics(tmp_path / "ref")


def test_finished_run_trains_further(references, tmp_path, capsys) -> None:
    """`rl resume --total-timesteps` extends a finished run from its final checkpoint: the first
    updates are the run's own, the new ones follow, and the summary counts the new total. A run
    started on another processor resumes, says that the continuation's rounding differs, and
    keeps the machine it started on beside the one of each resume."""
    import shutil

    from rl_cli.machine import machine_line, processor

    run_dir = tmp_path / "run"
    shutil.copytree(references["ppo"], run_dir)
    before = _metrics(run_dir)
    config = json.loads((run_dir / "config.json").read_text())
    assert config["processor"] == processor(), config.get("processor")
    (run_dir / "config.json").write_text(json.dumps({**config, "processor": "Other CPU 9"}))
    steps = CASES["ppo"][1] * 3 // 2  # 40,960 -> 61,440 steps: 80 -> 120 updates
    code, out, err = run_cli(["resume", str(run_dir), "--total-timesteps", str(steps),
                              "--no-progress"], capsys)
    assert code == 0, err
    after = _metrics(run_dir)
    updates = [r["update"] for r in after if not r.get("eval")]
    assert after[:len(before)] == before  # the run's own 80 updates, then the new ones
    assert updates == list(range(4, 124, 4)), updates  # no update twice, none missing
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["total_timesteps"] == steps and summary["resumed_from_update"] == 80
    config = json.loads((run_dir / "config.json").read_text())
    assert config["num_updates"] == 120 and config["resumed"][0]["from_update"] == 80
    assert config["processor"] == "Other CPU 9"
    assert config["resumed"][0]["processor"] == processor()
    started = machine_line({**config, "processor": "Other CPU 9"})
    assert f"started on {started}, resumed on " in " ".join(out.split()), out


def test_resume_refuses_a_run_this_version_builds_differently(references, tmp_path, capsys,
                                                              monkeypatch) -> None:
    """A preset changed since the checkpoint was written (here PPO's classic_control learning
    rate): `rl resume` names the change and trains nothing, instead of finishing the run with
    other settings than it started with; config.json and the metrics stay as they were."""
    import shutil

    from rl_algos.common.spec import Preset
    from rl_algos.ppo import config as ppo_config

    run_dir = tmp_path / "run"
    shutil.copytree(references["ppo"], run_dir)
    files = {p: p.read_bytes() for p in (run_dir / "config.json", run_dir / "metrics.jsonl")}
    old = ppo_config.PRESETS["classic_control"]
    monkeypatch.setitem(ppo_config.PRESETS, "classic_control",
                        Preset(old.config, {**old.hparams, "lr": 1e-3}, old.env))
    code, _, err = run_cli(["resume", str(run_dir), "--total-timesteps",
                            str(CASES["ppo"][1] * 2), "--no-progress"], capsys)
    assert code == 2, err
    assert "builds the run differently" in err and "hparams.lr: 0.00025 -> 0.001" in err, err
    assert {p: p.read_bytes() for p in files} == files


def test_resume_refuses_an_edited_config(references, tmp_path, capsys) -> None:
    """config.json edited after the checkpoint was written (here the number of environments):
    `rl resume` rebuilds from the recorded request and would silently undo the edit, so it names
    the field and trains nothing; the files stay as they were."""
    import shutil

    run_dir = tmp_path / "run"
    shutil.copytree(references["ppo"], run_dir)
    record = json.loads((run_dir / "config.json").read_text())
    num_envs = record["config"]["num_envs"]
    record["config"]["num_envs"] = 2 * num_envs
    (run_dir / "config.json").write_text(json.dumps(record, indent=2))
    files = {p: p.read_bytes() for p in (run_dir / "config.json", run_dir / "metrics.jsonl")}
    code, _, err = run_cli(["resume", str(run_dir), "--total-timesteps",
                            str(CASES["ppo"][1] * 2), "--no-progress"], capsys)
    assert code == 2, err
    assert "was edited after its checkpoint was written" in err, err
    assert f"config.num_envs: {num_envs} -> {2 * num_envs}" in err, err
    assert {p: p.read_bytes() for p in files} == files


def test_a_newer_version_may_add_fields_but_not_change_them(tmp_path) -> None:
    """`check_rebuilt` against a checkpoint an older version wrote: fields this version adds to
    the config or the request are no change, nor a tuple the checkpoint's JSON holds as a list;
    a changed value is, and so is a new keyword for the environment (a preset's new default);
    a meta-parameter file is recorded by its absolute path, as a resume rebuilds it."""
    from rl_algos.registry import get
    from rl_cli.checkpoint import ResumePoint
    from rl_cli.errors import UserError
    from rl_cli.request import hparams_record
    from rl_cli.resume import check_rebuilt

    then = {"algo": "ppo", "config": {"num_envs": 4, "hidden_sizes": [64, 64]},
            "env_kwargs": {}, "request": {"sets": {}}}
    now = {"algo": "ppo", "config": {"num_envs": 4, "hidden_sizes": (64, 64), "new_field": 1},
           "env_kwargs": {}, "request": {"sets": {}, "new_option": None}, "command": ["rl"]}
    point = ResumePoint(None, {"record": then}, tmp_path / "updates-000000004.ckpt")
    check_rebuilt(point, now)
    with pytest.raises(UserError, match=r"config.num_envs: 4 -> 8"):
        check_rebuilt(point, {**now, "config": {**now["config"], "num_envs": 8}})
    with pytest.raises(UserError, match=r"env_kwargs.opponent: None -> 'greedy'"):
        check_rebuilt(point, {**now, "env_kwargs": {"opponent": "greedy"}})
    check_rebuilt(ResumePoint(None, {}, point.path), now)  # a header without a record

    spec = get("lpo")
    hp = spec.hparams_cls()
    record = hparams_record(spec, hp, Path("rel") / "meta.npz")
    assert record[spec.meta_field] == str((Path("rel") / "meta.npz").resolve())


def test_copies_of_one_ctrl_c_stop_once_and_a_later_one_aborts(monkeypatch) -> None:
    """SIGINTs within the repeat window of the first (a terminal's Ctrl-C and `uv run`'s
    forwarded copy) ask for one checkpoint-and-stop; a SIGINT after the window aborts at once."""
    from rl_cli import checkpointer

    monkeypatch.setattr(checkpointer, "REPEAT_WINDOW_SECONDS", 0.3)
    # A caught signal leaves the SIGINT handler in place for the exit: put pytest's back after.
    previous = signal.getsignal(signal.SIGINT)
    try:
        _ctrl_c_cases(checkpointer)
    finally:
        signal.signal(signal.SIGINT, previous)


def _ctrl_c_cases(checkpointer) -> None:
    with checkpointer.Checkpointer(None, {"num_updates": 1}) as saver:
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)  # the copy: ignored
        assert saver.signum == signal.SIGINT
        time.sleep(0.4)
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1.0)  # the handler runs at the next bytecode boundary
    with checkpointer.Checkpointer(None, {"num_updates": 1}) as saver:
        os.kill(os.getpid(), signal.SIGTERM)  # asked to stop: exit 143 ...
        assert saver.signum == signal.SIGTERM
        with pytest.raises(KeyboardInterrupt):  # ... and a Ctrl-C then is no copy of it
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1.0)


@pytest.mark.heavy
def test_ctrl_c_to_the_process_group_of_uv_run_checkpoints(references, tmp_path) -> None:
    """`uv run rl run ...` interrupted as a terminal interrupts it: SIGINT to its whole process
    group (uv gets one and forwards another to rl) at a random chunk boundary. The run
    checkpoints, exits 130 with the command that continues it, and `rl resume` ends bitwise
    equal to the uninterrupted run."""
    import shutil

    uv = os.environ.get("UV") or shutil.which("uv")
    assert uv, "uv is not on PATH: the README's commands need it"
    chunk = CASES["ppo"][2]
    at = chunk * random.Random(time.time_ns()).randint(1, 8)
    run_dir = tmp_path / "run"
    env = rl_process_env()
    proc = subprocess.Popen([uv, "run", "rl", *_args("ppo", tmp_path, "run")], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=Path(__file__).parents[3])
    deadline = time.monotonic() + 300
    while _updates_saved(run_dir) < at and proc.poll() is None:
        assert time.monotonic() < deadline, "the run wrote no checkpoint in 300 s"
        time.sleep(0.005)
    os.killpg(proc.pid, signal.SIGINT)
    code, text = _finish(proc)
    assert code == 130, f"(interrupted after the checkpoint at update {at}) {text}"
    assert "rl resume" in text and "checkpoint" in text, text
    code, text = _finish(_rl(["resume", str(run_dir), "--no-progress"]))
    assert code == 0, text
    _assert_same_run(run_dir, references["ppo"])


def test_refuse_rebuilt_compares_what_was_recorded(tmp_path) -> None:
    """`refuse_rebuilt` (`rl evolve --resume`'s check): a tuple recorded as a list and a field
    this version adds pass; a changed value and a recorded field this version lost are named;
    a section the record lacks is not compared."""
    from rl_cli.errors import UserError
    from rl_cli.resume import refuse_rebuilt

    then = {"config": {"hidden_sizes": [8, 8], "num_envs": 4}, "hparams": {"lr": 0.01}}
    now = {"config": {"hidden_sizes": (8, 8), "num_envs": 4, "new_field": True},
           "hparams": {"lr": 0.01}}
    wrote = tmp_path / "evolve.json"
    refuse_rebuilt(now, then, wrote, "evolve.json")
    refuse_rebuilt(now, {"config": then["config"]}, wrote, "evolve.json")
    with pytest.raises(UserError, match=r"hparams.lr: 0.02 -> 0.01.*its evolve.json names"):
        refuse_rebuilt(now, {**then, "hparams": {"lr": 0.02}}, wrote, "evolve.json")
    with pytest.raises(UserError, match=r"config.num_envs: 4 -> None"):
        refuse_rebuilt({**now, "config": {"hidden_sizes": (8, 8)}}, then, wrote, "evolve.json")
