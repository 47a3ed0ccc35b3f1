"""Learning-curve pictures: `rl run` leaves curves.png; `rl plot` overlays runs with labels from
what differs between them; bad input is one line and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import run_cli

from rl_cli.main import main
from rl_cli.plots import labels_for, load_curves

PNG = b"\x89PNG\r\n\x1a\n"



@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> list[Path]:
    logdir = tmp_path_factory.mktemp("runs")
    for algo in ("ppo", "dpo"):
        evaluate = ["--eval-every", "10", "--eval-episodes", "3"] if algo == "ppo" else []
        with pytest.raises(SystemExit) as done:
            main(["--no-compile-cache", "run", "--algo", algo, "--env", "gymnax/CartPole-v1",
                  "--num-seeds", "3", "--total-timesteps", "20480", "--logdir", str(logdir),
                  "--run-name", algo, "--no-progress", *evaluate])
            raise SystemExit(0)
        assert not done.value.code
    return [logdir / "ppo", logdir / "dpo"]


def test_periodic_greedy_evaluation(two_runs, tmp_path: Path, capsys) -> None:
    """`--eval-every 10`: greedy evaluations at updates 10, 20, 30, 40 (of 40), in metrics.jsonl
    and the curves; the last is the final agents' evaluation the summary reports (same agents,
    same episodes)."""
    curves = load_curves(two_runs[0])
    assert curves.eval_steps.tolist() == [10 * 512, 20 * 512, 30 * 512, 40 * 512]
    assert curves.eval_returns.shape == (4, 3)
    summary = json.loads((two_runs[0] / "summary.json").read_text())
    np.testing.assert_allclose(curves.eval_returns[-1], summary["greedy_eval_return_per_member"])
    assert len(load_curves(two_runs[1]).eval_steps) == 0
    out = tmp_path / "with-eval.png"
    code, _, err = run_cli(["plot", *map(str, two_runs), "--eval", "--out", str(out)], capsys)
    assert code == 0, err
    assert out.read_bytes()[:8] == PNG


def test_rl_run_writes_curves_png(two_runs) -> None:
    for run in two_runs:
        assert (run / "curves.png").read_bytes()[:8] == PNG
        curves = load_curves(run)
        assert curves.returns.shape[1] == 3 and len(curves.steps) == curves.returns.shape[0]
        mean, band = curves.mean_band
        rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
        rows = [r for r in rows if not r.get("eval")]
        np.testing.assert_allclose(mean[-1], rows[-1]["episode_return_mean"], rtol=1e-6)
        assert np.all(band[np.isfinite(band)] >= 0)


def test_rl_plot_overlays_runs(two_runs, tmp_path: Path, capsys) -> None:
    out = tmp_path / "ppo-vs-dpo.png"
    code, text, err = run_cli(["plot", *map(str, two_runs), "--out", str(out)], capsys)
    assert code == 0, err
    assert out.read_bytes()[:8] == PNG and str(out) in text
    labels = labels_for([load_curves(r) for r in two_runs])
    assert labels[0].startswith("ppo gymnax/CartPole-v1") and labels[1].startswith("dpo")
    assert "alpha" in labels[1]  # DPO's own hyperparameters differ from PPO's (absent there)


def test_rl_plot_draws_another_metric(two_runs, tmp_path: Path, capsys) -> None:
    """`--metric loss/approx_kl`: the per-chunk value the run logged (one per chunk: [T, 1])."""
    curves = load_curves(two_runs[1], "loss/approx_kl")
    rows = [json.loads(line) for line in (two_runs[1] / "metrics.jsonl").read_text().splitlines()]
    rows = [r for r in rows if not r.get("eval")]
    assert curves.returns.shape == (len(rows), 1)
    np.testing.assert_allclose(curves.returns[:, 0], [r["loss/approx_kl"] for r in rows])
    out = tmp_path / "kl.png"
    code, _, err = run_cli(["plot", *map(str, two_runs), "--metric", "loss/approx_kl",
                            "--out", str(out)], capsys)
    assert code == 0, err
    assert out.read_bytes()[:8] == PNG


def test_a_metric_missing_from_some_chunks_is_a_gap(tmp_path: Path) -> None:
    """A chunk may lack a metric (a win rate where no episode ended): a gap, not an error."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"algo": "ppo", "env": "gymnax/CartPole-v1"}))
    rows = [{"env_steps": 100, "episode_return": [None, 1.0]},
            {"env_steps": 200, "episode_return": [2.0, 3.0], "win_rate": [0.5, 1.0]},
            {"env_steps": 300, "episode_return": [2.0, 3.0]}]
    (run / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    curves = load_curves(run, "win_rate")
    np.testing.assert_array_equal(np.isnan(curves.returns), [[1, 1], [0, 0], [1, 1]])
    assert curves.returns[1].tolist() == [0.5, 1.0]


@pytest.mark.parametrize("argv, hint", [
    (["missing-dir"], "does not exist"),
    (["RUN", "--label", "a", "--label", "b"], "--label was given 2 times for 1 runs"),
    (["RUN", "--out-suffix", ".gif"], "must end in .png, .svg or .pdf"),
    (["RUN", "--metric", "loss/nope"], "rl: error: '{RUN}' logged no metric 'loss/nope'; pass "
                                       "--metric one of: episode_length_mean, episode_return, "),
    (["RUN", "--metric", "loss/approx_kl", "--eval"], "with --metric loss/approx_kl drop --eval"),
])
def test_rl_plot_bad_input_is_one_line(argv, hint, two_runs, tmp_path: Path, capsys) -> None:
    out = tmp_path / "pic.png"
    if "--out-suffix" in argv:
        out = out.with_suffix(argv[-1])
        argv = argv[:-2]
    argv = [str(two_runs[0]) if a == "RUN" else str(tmp_path / a) if a == "missing-dir" else a
            for a in argv]
    code, _, err = run_cli(["plot", *argv, "--out", str(out)], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    hint = hint.replace("{RUN}", str(two_runs[0]))
    assert len(lines) == 1 and lines[0].startswith("rl: error:") and hint in lines[0], err
    assert not list(tmp_path.iterdir())
