"""Sweeps: the whole grid x seeds compiles once and every member equals the same member trained
alone; the CLI writes the ranking, sweep.csv and hparams-tagged TensorBoard runs; and every bad
sweep input ends with one line, exit code 2 and nothing written."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import jax
import numpy as np
import pytest
from cli_helpers import run_cli

from rl_cli.stats import mean_ci95
from rl_cli.sweep import SweepRequest, member_inputs, plan_sweep, run_sweep, sweep
from rl_core import make_train

# 4 envs x 16 steps = 64 steps per update, 2 updates.
TINY = {"num_steps": "16", "num_minibatches": "2", "num_epochs": "1"}
LRS, ENTS, SEEDS = [1e-4, 3e-4, 1e-3], [0.0, 0.01], 8


def test_sweep_compiles_once_and_members_equal_solo_runs() -> None:
    plan = plan_sweep(SweepRequest(algo="ppo", env="gymnax/CartPole-v1",
                                   grid={"lr": LRS, "ent_coef": ENTS}, num_seeds=SEEDS,
                                   total_timesteps=128, sets=TINY))
    assert len(plan.members) == 3 * 2 * 8
    algo = plan.prepared.algorithm
    traces = {"update": 0}

    def counted_update(carry, hp):
        traces["update"] += 1  # runs once per trace, never while the compiled program runs
        return algo.update(carry, hp)

    plan.prepared.algorithm = algo._replace(update=counted_update)
    compiled = []
    res = run_sweep(plan, on_compiled=compiled.append)
    # One compiled program for all 48 members: the update was traced exactly once.
    assert traces["update"] == 1 and len(compiled) == 1
    assert res.metrics["episode_count"].shape == (48, 2)

    # Each member alone (its own key and hyperparameters, batch of one) gives the same agent.
    keys, hp = member_inputs(plan)
    solo = jax.jit(make_train(algo))
    params = jax.tree.leaves(res.state.train_state.params)
    for m in plan.members:
        point = plan.points[m.point]
        assert (point.lr, point.ent_coef) == (LRS[m.point // 2], ENTS[m.point % 2])
        assert float(hp.lr[m.position]) == np.float32(point.lr)
        alone = solo(keys[m.position], jax.tree.map(lambda x, i=m.position: x[i], hp))
        for k in ("episode_count", "episode_return_sum", "episode_length_sum"):
            np.testing.assert_array_equal(alone.metrics[k], res.metrics[k][m.position])
        for a, b in zip(jax.tree.leaves(alone.state.train_state.params), params, strict=True):
            # vmap may associate float32 sums differently: last-bit differences only.
            np.testing.assert_allclose(a, b[m.position], rtol=0, atol=1e-6)
    # Members with different learning rates end with different parameters.
    assert not np.allclose(params[0][0], params[0][16])

    # The ranking is each point's mean final return over its 8 seeds, best first.
    assert [r.num_seeds for r in res.ranking] == [8] * 6
    for r in res.ranking:
        vals = [res.final_returns[m.position] for m in plan.members if m.point == r.point]
        mean, ci = mean_ci95(np.array(vals))
        assert r.mean == pytest.approx(mean) and r.ci95 == pytest.approx(ci)
    means = [r.mean for r in res.ranking]
    assert means == sorted(means, reverse=True)


def test_sweep_api_random_search_is_reproducible() -> None:
    kw = dict(sample={"lr": ("loguniform", 1e-5, 1e-2)}, num_samples=3, num_seeds=1, seed=5,
              total_timesteps=128, sets={"num_steps": 16, "num_minibatches": 2})
    a, b = sweep("ppo", "gymnax/CartPole-v1", **kw), sweep("ppo", "gymnax/CartPole-v1", **kw)
    lrs = [p["lr"] for p in a.points]
    assert lrs == [p["lr"] for p in b.points] and len(set(lrs)) == 3
    assert all(1e-5 <= lr <= 1e-2 for lr in lrs)
    np.testing.assert_array_equal(a.final_returns, b.final_returns)



def test_sweep_cli_writes_ranking_csv_and_tagged_runs(tmp_path: Path, capsys) -> None:
    code, out, err = run_cli(
        ["--no-compile-cache", "sweep", "--env", "gymnax/CartPole-v1", "--grid", "lr=1e-4,1e-3",
         "--num-seeds", "2", "--seed", "4", "--total-timesteps", "256", "--set", "num_steps=16",
         "--set", "num_minibatches=2", "--logdir", str(tmp_path), "--run-name", "s",
         "--no-progress"], capsys)
    assert code == 0, err
    run = tmp_path / "s"
    rows = list(csv.DictReader((run / "sweep.csv").open()))
    assert [(r["point"], r["seed"]) for r in rows] == [("0", "4"), ("0", "5"), ("1", "4"),
                                                       ("1", "5")]
    assert [float(r["lr"]) for r in rows] == [1e-4, 1e-4, 1e-3, 1e-3]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["num_members"] == 4 and summary["swept"] == ["lr"]
    assert sorted(r["point"] for r in summary["ranking"]) == [0, 1]
    assert "rank" in out and "compiled once in" in out

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    members = sorted(p.name for p in (run / "tb").iterdir() if p.is_dir())
    assert members == ["p000-seed4", "p000-seed5", "p001-seed4", "p001-seed5"]
    acc = EventAccumulator(str(run / "tb" / "p001-seed5"))
    acc.Reload()
    session = acc.PluginTagToContent("hparams")["_hparams_/session_start_info"]
    from tensorboard.plugins.hparams import plugin_data_pb2

    info = plugin_data_pb2.HParamsPluginData.FromString(session).session_start_info
    assert info.hparams["lr"].number_value == pytest.approx(1e-3)
    assert info.hparams["seed"].number_value == 5
    assert {"episode_return", "hparam/final_return"} <= set(acc.Tags()["scalars"])


def test_win_rates_reach_the_ranking_csv_and_table(tmp_path: Path) -> None:
    """Where the environment reports wins (SMAX), the sweep's outcome per member goes to
    sweep.csv and, as each point's mean over its seeds with an undecided seed left out, to the
    ranking and its table: from a sweep result whose members' metrics are set by hand."""
    from rich.console import Console

    from rl_cli.reporting import ranking_table
    from rl_cli.sweep import SweepResult, member_outcomes, point_outcomes
    from rl_cli.sweep_points import Member, RankRow
    from rl_cli.sweep_runner import write_csv

    # 2 points x 2 seeds, 3 updates: episodes ended and battles won per update.
    count = np.array([[2, 2, 4], [1, 1, 4], [0, 3, 2], [5, 0, 0]], np.float32)
    won = np.array([[0, 1, 3], [0, 1, 1], [0, 3, 2], [5, 0, 0]], np.float32)
    metrics = {"episode_count": count, "episode_won_sum": won,
               "episode_return_sum": count * 2.0}
    outcomes = member_outcomes(metrics, env=None)
    assert list(outcomes) == ["final_win_rate_per_member"]  # per member only, never pooled
    members = [Member(i, i // 2, i % 2, f"p{i // 2:03d}-seed{i % 2}") for i in range(4)]
    ranking = [RankRow(1, 1, {"lr": 1e-3}, 2.0, 0.0, 2), RankRow(2, 0, {"lr": 1e-4}, 2.0, 0.0, 2)]
    result = SweepResult([{"lr": 1e-4}, {"lr": 1e-3}], ["lr"], members, np.full(4, 2.0),
                         ranking, metrics, None, 1.0, 1.0, 96, outcomes)
    rates = outcomes["final_win_rate_per_member"]
    assert rates[3] is None and None not in rates[:3]  # no battle ended in its final window
    assert point_outcomes(result, 0) == {"final_win_rate_mean": pytest.approx(
        (rates[0] + rates[1]) / 2)}
    assert point_outcomes(result, 1) == {"final_win_rate_mean": pytest.approx(rates[2])}
    write_csv(tmp_path / "sweep.csv", result)
    rows = list(csv.DictReader((tmp_path / "sweep.csv").open()))
    assert [r["final_win_rate"] for r in rows[3:]] == [""]
    assert [float(r["final_win_rate"]) for r in rows[:3]] == pytest.approx(rates[:3])
    summary = {"algo": "ippo", "env": "jaxmarl/SMAX_3m", "num_members": 4,
               "steps_per_second": 1.0, "compile_seconds": 1.0,
               "ranking": [{"final_win_rate_mean": point_outcomes(result, r.point)[
                   "final_win_rate_mean"]} for r in ranking]}
    console = Console(width=80, record=True)
    console.print(ranking_table(result, summary))
    text = console.export_text()
    assert "win rate" in text
    assert f"{summary['ranking'][0]['final_win_rate_mean']:.1%}" in text


BAD_SWEEPS = [
    (["--grid", "num_envs=4,8"], "static field"),
    (["--grid", "ent_coeff=0,0.01"], "Did you mean ent_coef"),
    (["--grid", "lr"], "key=v1,v2"),
    (["--grid", "lr=1e-3,fast"], "not a number"),
    (["--grid", "lr=1e-3,1e-3"], "twice"),
    (["--grid", "lr=1e-3", "--grid", "lr=1e-4"], "twice"),
    (["--grid", "lr=-1,1e-3"], "lr must be > 0"),
    (["--sample", "lr=gaussian:0:1"], "unknown distribution"),
    (["--sample", "lr=loguniform:0:1e-2"], "LOW > 0"),
    (["--sample", "lr=uniform:1e-2:1e-3"], "below HIGH"),
    (["--sample", "lr=uniform:1e-3"], "DIST:LOW:HIGH"),
    (["--grid", "lr=1e-3,1e-4", "--sample", "lr=uniform:1e-4:1e-3"], "pick one"),
    (["--grid", "lr=1e-3,1e-4", "--set", "lr=1e-3"], "both swept and fixed"),
    (["--grid", "lr=1e-3,1e-4", "--num-samples", "4"], "--sample"),
    (["--num-seeds", "4"], "nothing to sweep"),
    (["--grid", "lr=1e-3,1e-4", "--num-seeds", "0"], "--num-seeds"),
    (["--grid", "lr=1e-3,1e-4", "--devices", "0"], "--devices"),
    (["--grid", "lr=1e-3,1e-4", "--devices", "999"], "--devices"),
    (["--grid", "lr=1e-3,1e-4", "--coordinator", "localhost:1234"], "missing: process count"),
    (["--grid", "lr=1e-3,1e-4", "--coordinator", "localhost:1", "--num-processes", "2",
      "--process-id", "2"], "process id"),
    (["--grid", "lr=1e-3,1e-4", "--distributed-auto", "--process-id", "0"], "drop"),
]


@pytest.mark.parametrize("args,hint", BAD_SWEEPS, ids=[" ".join(a) for a, _ in BAD_SWEEPS])
def test_bad_sweep_input_is_one_line(args, hint, tmp_path: Path, capsys) -> None:
    code, _, err = run_cli(["--no-compile-cache", "sweep", "--env", "gymnax/CartPole-v1", *args,
                            "--logdir", str(tmp_path)], capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rl: error:"), err
    assert hint in lines[0]
    assert not any(tmp_path.iterdir()), "nothing may be written for bad input"


BAD_RUNS = [
    (["--devices", "0"], "--devices"),
    (["--devices", "64"], "--devices"),
    (["--coordinator", "nocolon", "--num-processes", "2", "--process-id", "0"], "host:port"),
]


@pytest.mark.parametrize("args,hint", BAD_RUNS, ids=[" ".join(a) for a, _ in BAD_RUNS])
def test_bad_run_device_input_is_one_line(args, hint, tmp_path: Path, capsys) -> None:
    code, _, err = run_cli(["--no-compile-cache", "run", "--env", "gymnax/CartPole-v1", *args,
                            "--logdir", str(tmp_path)], capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rl: error:") and hint in lines[0], err
    assert not any(tmp_path.iterdir())


def test_data_parallel_refused_for_an_algorithm_without_it(monkeypatch, tmp_path: Path,
                                                           capsys) -> None:
    import dataclasses

    import rl_algos.registry as registry
    from rl_algos.ppo import make_algorithm

    spec = dataclasses.replace(registry.ALGORITHMS["ppo"], name="nodp", data_parallel=False,
                               make_algorithm=lambda env, config: make_algorithm(env, config))
    monkeypatch.setitem(registry.ALGORITHMS, "nodp", spec)
    code, _, err = run_cli(["--no-compile-cache", "run", "--algo", "nodp", "--env",
                            "gymnax/CartPole-v1", "--data-parallel", "--logdir", str(tmp_path)],
                           capsys)
    having = ", ".join(n for n, s in registry.ALGORITHMS.items() if s.data_parallel)
    assert having.startswith("ppo, dpo, lpo")
    assert code == 2 and err.strip() == (f"rl: error: nodp has no data-parallel mode ({having} "
                                         "have); drop --data-parallel")
    assert not any(tmp_path.iterdir())
