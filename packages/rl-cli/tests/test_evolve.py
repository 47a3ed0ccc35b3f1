"""`rl evolve` end to end at tiny size: a stopped and resumed run repeats the uninterrupted one
(sharded over 4 simulated devices) generation by generation, the files and plots are written, the
evolved drift trains an `lpo` agent, the value-loss target runs, and bad input is one line with
nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import run_cli

# 6 members x 1 inner seed, 8 updates of 128 steps; a large inner learning rate and large initial
# meta-weights make the members' drifts matter even in so short a run.
TINY = ["--no-compile-cache", "evolve", "--env", "gymnax/CartPole-v1", "--population", "6",
        "--inner-seeds", "1", "--total-timesteps", "1024", "--hidden", "8", "--sigma", "1.0",
        "--init-scale", "3", "--no-baseline", "--set", "num_envs=4", "--set", "num_steps=32",
        "--set", "num_minibatches=2", "--set", "num_epochs=2", "--set", "lr=0.01"]



def history(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]


def npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def run_on_devices(argv: list[str], devices: int) -> None:
    """`rl ...` in a fresh process that sees `devices` simulated CPU devices (the count is fixed
    when JAX starts), sharing the test suite's persistent compilation cache."""
    import jax

    env = {**os.environ, "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} "
           f"--xla_force_host_platform_device_count={devices}"}
    if jax.config.jax_compilation_cache_dir:
        env["JAX_COMPILATION_CACHE_DIR"] = str(jax.config.jax_compilation_cache_dir)
        env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0.5"
    code = "import sys; from rl_cli.main import main; main(sys.argv[1:])"
    p = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True,
                       timeout=900, env=env)
    assert p.returncode == 0, p.stderr[-4000:]


@pytest.mark.heavy
def test_resumed_run_repeats_the_uninterrupted_sharded_one(tmp_path: Path, capsys) -> None:
    """The uninterrupted run shards its 6 members over 4 devices (padded to 8); the stopped and
    resumed one runs on 1 device. Both must give the same fitness, generation by generation."""
    run_on_devices([*TINY, "--generations", "3", "--logdir", str(tmp_path), "--run-name", "full"],
                   devices=4)
    summary = json.loads((tmp_path / "full" / "summary.json").read_text())
    assert summary["parallelism"] == "population sharded over 4 devices", summary
    code, _, err = run_cli([*TINY, "--generations", "2", "--logdir", str(tmp_path),
                            "--run-name", "part"], capsys)
    assert code == 0, err
    assert len(history(tmp_path / "part")) == 2
    code, out, err = run_cli(["--no-compile-cache", "evolve", "--resume", str(tmp_path / "part"),
                              "--generations", "3"], capsys)
    assert code == 0, err
    full, part = history(tmp_path / "full"), history(tmp_path / "part")
    assert [r["generation"] for r in part] == [0, 1, 2]
    for a, b in zip(full, part, strict=True):
        for key in ("best_fitness", "mean_fitness", "best_so_far", "best_member"):
            assert a[key] == b[key], (key, a, b)
    # The comparison means something only if the members' fitnesses differ.
    assert any(r["best_fitness"] != r["mean_fitness"] for r in full), full
    # Built differently now than when it started (as if a preset changed: evolve.json records
    # another inner learning rate): a further resume names the change and trains nothing.
    settings = tmp_path / "part" / "evolve.json"
    recorded = json.loads(settings.read_text())
    recorded["hparams"]["lr"] = 0.02
    settings.write_text(json.dumps(recorded))
    files = {p: p.read_bytes() for p in (settings, tmp_path / "part" / "history.jsonl")}
    code, _, err = run_cli(["--no-compile-cache", "evolve", "--resume", str(tmp_path / "part"),
                            "--generations", "4"], capsys)
    assert code == 2 and "builds the run differently" in err and "hparams.lr: 0.02 -> 0.01" in err
    assert len(err.strip().splitlines()) == 1, err
    assert {p: p.read_bytes() for p in files} == files
    # The whole strategy state and the saved meta-parameters agree bit for bit.
    ck_full, ck_part = npz(tmp_path / "full" / "checkpoint.npz"), npz(tmp_path / "part" /
                                                                       "checkpoint.npz")
    assert ck_full.keys() == ck_part.keys()
    for k in ck_full:
        np.testing.assert_array_equal(ck_full[k], ck_part[k], err_msg=k)
    best = npz(tmp_path / "full" / "best_meta_params.npz")
    assert str(best["target"]) == "drift" and best["w1"].shape == (8, 8)
    for name in ("fitness.png", "meta_function.png", "summary.json", "evolve.json"):
        assert (tmp_path / "full" / name).stat().st_size > 0, name
    assert list((tmp_path / "full" / "tb").glob("events.out.tfevents.*"))

    # The evolved drift trains an ordinary agent.
    code, _, err = run_cli(["--no-compile-cache", "run", "--algo", "lpo", "--env",
                            "gymnax/CartPole-v1", "--meta-params",
                            str(tmp_path / "full" / "best_meta_params.npz"), "--num-seeds", "2",
                            "--total-timesteps", "256", "--set", "num_steps=16",
                            "--set", "num_minibatches=2", "--logdir", str(tmp_path),
                            "--run-name", "lpo", "--no-progress"], capsys)
    assert code == 0, err
    config = json.loads((tmp_path / "lpo" / "config.json").read_text())
    assert config["hparams"]["drift"].endswith("best_meta_params.npz")
    assert len(json.loads((tmp_path / "lpo" / "summary.json").read_text())[
        "final_return_per_member"]) == 2

    # Wrong files are refused in one line.
    bad = tmp_path / "bad.npz"
    np.savez(bad, target=np.asarray("drift"), w1=np.zeros((3, 8)), b1=np.zeros(8),
             w2=np.zeros(8))
    for path, hint in ((bad, "wrong shapes"), (tmp_path / "missing.npz", "no such file")):
        code, _, err = run_cli(["--no-compile-cache", "run", "--algo", "lpo", "--env",
                                "gymnax/CartPole-v1", "--meta-params", str(path), "--logdir",
                                str(tmp_path / "refused")], capsys)
        assert code == 2 and hint in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "refused").exists()


def test_value_loss_target_runs(tmp_path: Path, capsys) -> None:
    code, out, err = run_cli([*TINY, "--meta", "value_loss", "--generations", "1", "--logdir",
                              str(tmp_path), "--run-name", "vl"], capsys)
    assert code == 0, err
    (record,) = history(tmp_path / "vl")
    assert np.isfinite(record["best_fitness"]) and np.isfinite(record["mean_fitness"])
    best = npz(tmp_path / "vl" / "best_meta_params.npz")
    assert str(best["target"]) == "value_loss" and best["w1"].shape == (4, 8)
    assert (tmp_path / "vl" / "meta_function.png").stat().st_size > 0
    # A value-loss network is not a drift.
    code, _, err = run_cli(["--no-compile-cache", "run", "--algo", "lpo", "--env",
                            "gymnax/CartPole-v1", "--meta-params",
                            str(tmp_path / "vl" / "best_meta_params.npz"), "--logdir",
                            str(tmp_path / "refused")], capsys)
    assert code == 2 and "'value_loss' network" in err, err


@pytest.mark.heavy
def test_ta_lpo_target_runs_and_its_drift_trains_lpo(tmp_path: Path, capsys) -> None:
    code, _, err = run_cli([*TINY, "--meta", "ta_lpo", "--generations", "1", "--logdir",
                            str(tmp_path), "--run-name", "ta"], capsys)
    assert code == 0, err
    mean = npz(tmp_path / "ta" / "mean_meta_params.npz")
    assert str(mean["target"]) == "ta_lpo" and mean["w1"].shape == (9, 8)
    assert (tmp_path / "ta" / "meta_function.png").stat().st_size > 0
    code, out, err = run_cli(["--no-compile-cache", "run", "--algo", "lpo", "--env",
                              "gymnax/CartPole-v1", "--meta-params",
                              str(tmp_path / "ta" / "mean_meta_params.npz"),
                              "--total-timesteps", "1024", "--set", "num_envs=4", "--logdir",
                              str(tmp_path), "--run-name", "lpo"], capsys)
    assert code == 0, err
    config = json.loads((tmp_path / "lpo" / "config.json").read_text())
    assert config["hparams"]["drift"].endswith("mean_meta_params.npz"), config


REFUSED = [
    (["run", "--algo", "lpo", "--env", "gymnax/CartPole-v1"], "--meta-params FILE"),
    (["run", "--algo", "ppo", "--env", "gymnax/CartPole-v1", "--meta-params", "x.npz"],
     "only applies"),
    (["evolve", "--env", "gymnax/CartPole-v1", "--population", "5"], "even population"),
    (["evolve", "--env", "gymnax/CartPole-v1", "--algo", "dpo"], "--algo must be ppo"),
    (["evolve", "--env", "gymnax/CartPole-v1", "--meta", "reward"], "unknown meta-target"),
    (["evolve", "--env", "gymnax/CartPole-v1", "--strategy", "pso"], "known: open_es"),
    (["evolve", "--env", "gymnax/CartPole-v1", "--env", "gymnax/Acrobot-v1", "--no-baseline"],
     "--no-baseline"),
    (["evolve", "--resume", "nowhere"], "no evolve.json"),
    (["evolve", "--resume", "nowhere", "--population", "8"], "only --generations"),
    (["evolve", "--env", "gymnax/CartPole-v1", "--set", "num_epochz=2"], "num_epochs"),
]


@pytest.mark.parametrize("argv,hint", REFUSED, ids=[h for _, h in REFUSED])
def test_bad_input_is_one_line_and_writes_nothing(argv, hint, tmp_path: Path, capsys) -> None:
    code, _, err = run_cli(["--no-compile-cache", *argv, "--logdir", str(tmp_path / "runs")],
                           capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rl: error:") and hint in err, err
    assert not (tmp_path / "runs").exists()


def test_a_stop_before_the_first_generation_leaves_nothing_and_a_later_one_resumes(
        tmp_path: Path, capsys, monkeypatch) -> None:
    """`rl evolve` trains inside `session.claimed`, as `rl run` does: a Ctrl-C during the first
    generation (before any checkpoint.npz) removes the fresh directory and says there is nothing
    to resume (exit 130); one during the second keeps the directory, whose first generation
    `--resume` continues from."""
    from rl_algos import evolve

    generations = evolve.run_generation

    def stopped_at(g_stop: int):
        def run_generation(strategy, state, root, g, *args, **kwargs):
            if g == g_stop:
                raise KeyboardInterrupt
            return generations(strategy, state, root, g, *args, **kwargs)
        return run_generation

    monkeypatch.setattr(evolve, "run_generation", stopped_at(0))
    code, _, err = run_cli([*TINY, "--generations", "2", "--logdir", str(tmp_path),
                            "--run-name", "first"], capsys)
    assert code == 130 and "nothing to resume" in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "first").exists()

    monkeypatch.setattr(evolve, "run_generation", stopped_at(1))
    code, _, err = run_cli([*TINY, "--generations", "2", "--logdir", str(tmp_path),
                            "--run-name", "second"], capsys)
    assert code == 130, err
    assert [r["generation"] for r in history(tmp_path / "second")] == [0]
    monkeypatch.setattr(evolve, "run_generation", generations)
    code, _, err = run_cli(["--no-compile-cache", "evolve", "--resume", str(tmp_path / "second"),
                            "--generations", "2"], capsys)
    assert code == 0, err
    assert [r["generation"] for r in history(tmp_path / "second")] == [0, 1]
