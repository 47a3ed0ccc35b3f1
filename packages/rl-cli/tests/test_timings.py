"""`RL_TIMINGS=1`: `rl run` prints how long each phase of the process took, after its summary."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_helpers import run_cli

from rl_cli import timings


def test_phases_are_the_intervals_between_marks_summed_by_name(monkeypatch) -> None:
    monkeypatch.setattr(timings, "ENABLED", True)
    monkeypatch.setattr(timings, "_START", 10.0)
    monkeypatch.setattr(timings, "_marks", [("a", 11.0), ("b", 13.0), ("a", 13.5), ("c", 14.0)])
    assert timings.phases() == [("a", 1.5), ("b", 2.0), ("c", 0.5)]


def test_marks_are_not_recorded_unless_enabled(monkeypatch) -> None:
    monkeypatch.setattr(timings, "ENABLED", False)
    monkeypatch.setattr(timings, "_marks", [])
    timings.mark("x")
    assert timings.phases() == []


def test_rl_run_prints_every_phase(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setattr(timings, "ENABLED", True)
    monkeypatch.setattr(timings, "_marks", [])
    code, out, err = run_cli(["--no-compile-cache", "run", "--env", "gymnax/CartPole-v1",
                              "--total-timesteps", "1024", "--logdir", str(tmp_path),
                              "--no-progress", "--eval-episodes", "2"], capsys)
    assert code == 0, err
    rows = dict(re.findall(r"^rl timings: (.+?) +(\d+\.\d+)$", err, re.M))
    for phase in ("environment (imports its library)", "compile (or load from the cache)",
                  "training", "checkpoint", "params.eqx", "curves.png",
                  "final greedy evaluation", "summary table", "total"):
        assert phase in rows, (phase, err)
    total = float(rows.pop("total"))
    assert total == pytest.approx(sum(float(s) for s in rows.values()), abs=0.01)
