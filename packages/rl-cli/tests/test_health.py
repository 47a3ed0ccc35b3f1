"""Divergence and non-finite detection: the criterion on synthetic chunks, and `rl run` on a
setting that really diverges (PPO on CartPole at lr=1e3) and one that overflows (lr=1e30 with
--halt-on-nan, exit code 4)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rl_cli.errors import EXIT_HALTED
from rl_cli.health import LOSS_GROWTH, LOSS_LIMIT, HealthMonitor, NonFiniteHalt, diverging
from rl_cli.main import main
from rl_core import ChunkReport

SHORT = ["--total-timesteps", "5120", "--no-progress"]  # 10 updates of 4 envs x 128 steps


def _report(chunk: int, losses: dict[str, list[float]], first_bad=(-1, -1),
            params_ok=(True, True), chunk_len: int = 2) -> ChunkReport:
    metrics = {k: np.tile(np.asarray(v, np.float32)[:, None], (1, chunk_len))
               for k, v in losses.items()}
    metrics["episode_count"] = np.ones((2, chunk_len), np.float32)
    health = {"first_nonfinite_update": np.asarray(first_bad, np.int32),
              "params_finite": np.asarray(params_ok)}
    return ChunkReport(chunk, 5, (chunk + 1) * chunk_len, metrics, 0.1, health)


def test_the_divergence_criterion() -> None:
    assert LOSS_LIMIT == 1e6 and LOSS_GROWTH == 1e3
    assert diverging(50.0, 2e6)  # above the absolute limit
    assert not diverging(50.0, 4e4)  # 800x: not yet
    assert diverging(50.0, 5.1e4)  # more than 1e3x its first value
    assert not diverging(1e-3, 900.0)  # growth is measured from max(1, first)
    assert diverging(1e-3, 1001.0)
    assert not diverging(50.0, float("nan"))  # non-finite is reported apart


def test_monitor_marks_members_and_the_update() -> None:
    mon = HealthMonitor(["a", "b"])
    assert mon.observe(_report(0, {"loss/value": [40.0, 50.0], "other": [1e9, 1e9]})) == []
    lines = mon.observe(_report(1, {"loss/value": [60.0, 6e4]}))
    assert lines == ["warning: diverging loss (above 1e+06, or 1e+03x its first non-zero chunk "
                     "value) in b (loss/value = 6e+04 at update 4)"]
    lines = mon.observe(_report(2, {"loss/value": [70.0, 7e4]}, first_bad=(1, -1),
                                params_ok=(False, True)))
    assert lines == ["warning: non-finite values (NaN/inf) in a (metrics at update 6; "
                     "parameters at update 6)"]
    assert mon.observe(_report(3, {"loss/value": [np.nan, 7e4]}, first_bad=(0, -1))) == []
    s = mon.summary()
    assert s["nonfinite_members"] == ["a"] and s["diverging_members"] == ["b"]
    assert s["health_per_member"][0]["first_nonfinite_metric_update"] == 6
    assert s["health_per_member"][1]["diverged_metric"] == "loss/value"


def test_growth_counts_from_the_first_non_zero_chunk() -> None:
    """An off-policy learner's critic loss is 0 until learning starts, then grows from there."""
    mon = HealthMonitor(["a", "b"])
    mon.observe(_report(0, {"critic_loss": [0.0, 0.0], "other_metric": [0.0, 0.0]}))
    mon.observe(_report(1, {"critic_loss": [200.0, 0.0]}))
    assert mon.observe(_report(2, {"critic_loss": [1.5e3, 0.0]})) == []  # 7.5x its first value
    assert mon.observe(_report(3, {"critic_loss": [2.1e5, 2.0]})) != []  # 1050x
    assert mon.summary()["diverging_members"] == ["a"]


def test_halt_on_nan_raises_at_the_first_non_finite_chunk() -> None:
    mon = HealthMonitor(["a", "b"], halt_on_nan=True)
    mon.observe(_report(0, {"loss/value": [1.0, 1.0]}))
    with pytest.raises(NonFiniteHalt, match="update 3"):
        mon.observe(_report(1, {"loss/value": [1.0, 1.0]}, first_bad=(-1, 0)))


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(["--no-compile-cache", *argv])
        raise SystemExit(0)
    out = capsys.readouterr()
    return exc.value.code or 0, out.out, out.err


def test_ppo_at_lr_1e3_is_flagged_diverging(tmp_path: Path, capsys) -> None:
    code, out, err = _run(["run", "--env", "gymnax/CartPole-v1", "--set", "lr=1e3",
                           "--num-seeds", "2", "--logdir", str(tmp_path), "--run-name", "r",
                           *SHORT], capsys)
    assert code == 0, err
    assert "warning: diverging loss" in out and "seed_0" in out and "seed_1" in out
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["diverging_members"] == ["seed_0", "seed_1"]
    assert summary["nonfinite_members"] == []
    assert all(h["diverged_value"] > LOSS_LIMIT for h in summary["health_per_member"])


def test_ppo_at_the_default_lr_is_not_flagged(tmp_path: Path, capsys) -> None:
    code, out, err = _run(["run", "--env", "gymnax/CartPole-v1", "--logdir", str(tmp_path),
                           "--run-name", "r", *SHORT], capsys)
    assert code == 0, err
    assert "warning" not in out
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["diverging_members"] == [] and summary["nonfinite_members"] == []
    assert summary["health_per_member"][0]["status"] == "ok"


def test_halt_on_nan_stops_with_exit_code_4(tmp_path: Path, capsys) -> None:
    code, out, err = _run(["run", "--env", "gymnax/CartPole-v1", "--set", "lr=1e30",
                           "--halt-on-nan", "--logdir", str(tmp_path), "--run-name", "r",
                           *SHORT], capsys)
    assert code == EXIT_HALTED == 4
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rl: error: --halt-on-nan"), err
    assert "the non-finite state is not saved" in lines[0]
    run = tmp_path / "r"
    assert not (run / "params.eqx").exists()
    assert not list((run / "checkpoints").glob("*.ckpt"))  # the first chunk was already bad
    summary = json.loads((run / "summary.json").read_text())
    assert summary["nonfinite_members"] == ["seed_0"] and "halted" in summary
    # the chunks are cut short: fewer logged than the run's 10 updates
    assert len((run / "metrics.jsonl").read_text().splitlines()) < 10
