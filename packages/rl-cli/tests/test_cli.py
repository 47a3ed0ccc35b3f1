"""CLI tests: the happy path end to end (files, TensorBoard events, summary), and every kind of
bad input ending with one line on stderr, exit code 2, and nothing written."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import run_cli

from rl_cli.watchdog import Watchdog

TINY = ["--set", "num_steps=16", "--set", "num_minibatches=2", "--set", "num_epochs=1",
        "--total-timesteps", "1280"]



def test_run_writes_everything(tmp_path: Path, capsys) -> None:
    code, out, err = run_cli(
        ["--no-compile-cache", "run", "--env", "gymnax/CartPole-v1", "--num-seeds", "2",
         "--seed", "3", "--logdir", str(tmp_path), "--run-name", "r", "--no-progress", *TINY],
        capsys,
    )
    assert code == 0, err
    run = tmp_path / "r"
    config = json.loads((run / "config.json").read_text())
    assert config["seeds"] == [3, 4]
    assert config["config"]["num_steps"] == 16 and config["hparams"]["lr"] == 2.5e-4
    summary = json.loads((run / "summary.json").read_text())
    for key in ("final_return_per_member", "total_timesteps", "compile_seconds", "run_seconds",
                "steps_per_second"):
        assert key in summary
    # 1280 steps // (4 envs * 16 steps) = 20 updates of 64 steps.
    assert summary["total_timesteps"] == 1280
    assert len(summary["final_return_per_member"]) == 2
    assert summary["compile_seconds"] > 0 and summary["steps_per_second"] > 0
    lines = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert lines and lines[-1]["update"] == 20 and lines[-1]["env_steps"] == 1280
    assert all(len(x["episode_return"]) == 2 for x in lines)
    assert (run / "params.eqx").stat().st_size > 0
    assert "mean ± 95% CI" in out
    from rl_cli.machine import computing_on

    assert computing_on() in " ".join(out.split())  # the header names what computes the run

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run / "tb"))
    acc.Reload()
    tags = acc.Tags()["scalars"]
    assert {"episode_return/mean", "episode_return/seed_3", "episode_return/seed_4",
            "loss/total"} <= set(tags)
    vals = [e.value for e in acc.Scalars("episode_return/seed_3")]
    assert vals and all(np.isfinite(vals))


BAD_INPUTS = [
    (["run", "--env", "gymnax/CartPol-v1"], "gymnax/CartPole-v1"),
    (["run", "--env", "CartPole-v1"], "gymnax/CartPole-v1"),
    (["run", "--env", "gymnax/CartPole-v1", "--algo", "ppp"], "'ppo'"),
    (["run", "--env", "gymnax/CartPole-v1", "--set", "learning_rate=1e-3"], "lr"),
    (["run", "--env", "gymnax/CartPole-v1", "--set", "lr=fast"], "float"),
    (["run", "--env", "gymnax/CartPole-v1", "--set", "num_envs=2.5"], "int"),
    (["run", "--env", "gymnax/CartPole-v1", "--set", "lr"], "key=value"),
    (["run", "--env", "gymnax/CartPole-v1", "--set", "num_minibatches=3"], "divide"),
    (["run", "--env", "gymnax/CartPole-v1", "--set", "gamma=1.5"], "gamma"),
    (["run", "--env", "gymnax/CartPole-v1", "--num-seeds", "0"], "--num-seeds"),
    (["run", "--env", "gymnax/CartPole-v1", "--total-timesteps", "10"], "total_timesteps"),
    (["run", "--env", "gymnax/CartPole-v1", "--preset", "atari"], "preset"),
    (["run", "--env", "gymnax/CartPole-v1", "--env-arg", "gravity_x=1"], "gravity_x"),
    (["run", "--env", "gymnax/CartPole-v1", "--log-every", "7"], "--log-every"),
]


@pytest.mark.parametrize("argv,hint", BAD_INPUTS, ids=[" ".join(a[3:]) for a, _ in BAD_INPUTS])
def test_bad_input_is_one_line(argv, hint, tmp_path: Path, capsys) -> None:
    code, _, err = run_cli(["--no-compile-cache", *argv, "--logdir", str(tmp_path)], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rl: error:"), err
    assert hint in lines[0]
    assert "Traceback" not in err
    assert not any(tmp_path.iterdir()), "nothing may be written for bad input"


def test_missing_backend_names_the_extra(monkeypatch, tmp_path: Path, capsys) -> None:
    import rl_envs._registry as registry

    real = registry.importlib.util.find_spec
    monkeypatch.setattr(registry.importlib.util, "find_spec",
                        lambda name, *a: None if name == "gymnax" else real(name, *a))
    code, _, err = run_cli(["run", "--env", "gymnax/CartPole-v1", "--logdir", str(tmp_path)],
                           capsys)
    assert code == 2
    assert "jaxrlkit-envs[gymnax]" in err and len(err.strip().splitlines()) == 1
    assert not any(tmp_path.iterdir())


def test_envs_and_algos_list(capsys) -> None:
    code, out, _ = run_cli(["envs", "--backend", "gymnax"], capsys)
    assert code == 0
    assert "gymnax/CartPole-v1" in out and "Breakout-MinAtar" in out and "Discrete(2)" in out
    code, out, _ = run_cli(["algos"], capsys)
    assert code == 0 and "ppo" in out and "classic_control" in out


def test_run_reads_at_80_columns(tmp_path: Path) -> None:
    """`rl run` at 80 columns, with its progress bar: no line wider, nothing cut short (no
    ellipsis), the header broken between its parts, the run directory whole on its line."""
    import os
    import subprocess
    import sys

    import jax

    env = {**os.environ, "COLUMNS": "80",
           "RL_COMPILE_CACHE_DIR": jax.config.jax_compilation_cache_dir or ""}
    rl = "import sys; from rl_cli.main import main; main(sys.argv[1:])"
    out = subprocess.run([sys.executable, "-c", rl, "run", "--algo", "ppo", "--env",
                          "gymnax/CartPole-v1", "--total-timesteps", "20480", "--eval-episodes",
                          "2", "--logdir", str(tmp_path), "--run-name", "a-run-with-a-long-name"],
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    where = f"run dir {tmp_path / 'a-run-with-a-long-name'}"
    assert where in lines, out.stdout  # a path longer than a line keeps a line of its own
    assert max(len(line) for line in lines if line != where) <= 80, out.stdout
    assert "…" not in out.stdout, out.stdout
    assert lines[0].startswith("ppo on gymnax/CartPole-v1 · 1 seed(s) · 20,480 steps each")
    bar = next(line for line in lines if line.startswith("training"))
    assert "20k/20k steps" in bar and "/s return" in bar and "left" in bar, bar


def test_envs_reads_at_80_columns_and_lists_from_its_cache(tmp_path: Path, capsys,
                                                          monkeypatch) -> None:
    """`rl envs` as a user runs it, at 80 columns: no line wider, no id or family cut; the
    second call lists from the cache the first wrote, without importing the backend's library
    (which is what made the listing take tens of seconds); a damaged cache file is rebuilt
    (checked in this process: the same listing)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "COLUMNS": "80", "RL_CACHE_DIR": str(tmp_path)}
    rl = "import sys; from rl_cli.main import main; main(sys.argv[1:])"
    first = subprocess.run([sys.executable, "-c", rl, "envs", "--backend", "gymnax"],
                           env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert max(map(len, lines)) <= 80 and "…" not in first.stdout
    assert "gymnax/MountainCarContinuous-v0" in first.stdout and "classic_control" in first.stdout
    assert len(list((tmp_path / "envs").glob("gymnax-*.json"))) == 1
    code = ("import sys; from rl_cli.listing import print_envs; print_envs('gymnax'); "
            "print('imported gymnax' if 'gymnax' in sys.modules else 'no gymnax')")
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == [*lines, "no gymnax"]
    from rl_cli.listing import print_envs

    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("RL_CACHE_DIR", str(tmp_path))
    cached = next((tmp_path / "envs").glob("gymnax-*.json"))
    written = cached.read_text()
    for damaged in ("null", "[1, 2]", "{\"a\": 1}", "[[\"id\"]]", "not json"):  # rebuilt
        cached.write_text(damaged)
        print_envs("gymnax")
        assert capsys.readouterr().out == first.stdout, damaged
        assert cached.read_text() == written, damaged


def test_watchdog_fires_without_beats_and_not_with_them() -> None:
    fired: list[str] = []
    with Watchdog(0.3, on_fire=fired.append, poll=0.05) as dog:
        for _ in range(8):  # beats every 0.1 s keep it quiet for 0.8 s
            time.sleep(0.1)
            dog.beat("working")
        assert not fired
        dog.beat("running chunk 3/10")
        time.sleep(0.8)
    assert len(fired) == 1 and "running chunk 3/10" in fired[0]
