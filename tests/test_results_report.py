"""The results report's own arithmetic (tools/results.py): the training curve kept with each row
and the check of a published comparison between two rows."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

TOOL = Path(__file__).resolve().parents[1] / "tools" / "results.py"


def _tool():
    spec = importlib.util.spec_from_file_location("results_report", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _row(algo: str, env: str, seeds: list[float]) -> dict:
    return {"algo": algo, "env": env, "greedy": {"per_seed": seeds}}


def test_compact_curve_groups_chunks_and_keeps_gaps() -> None:
    results = _tool()
    steps = np.arange(1, 11, dtype=np.float64) * 100  # 10 chunks
    returns = np.stack([np.arange(10.0), np.full(10, np.nan)], axis=1)  # member 1: no episode
    returns[4, 1] = 7.0  # one episode of member 1, in the third group
    curve = results.compact_curve(steps, returns, points=4)
    # np.array_split of 10 chunks into 4 groups: 3, 3, 2, 2 chunks, each at its last step.
    assert curve["steps"] == [300, 600, 800, 1000]
    assert curve["per_seed"][0] == [1.0, 4.0, 6.5, 8.5]
    assert curve["per_seed"][1] == [None, 7.0, None, None]
    # Fewer chunks than points: every chunk kept as it is.
    short = results.compact_curve(steps[:3], returns[:3], points=100)
    assert short["steps"] == [100, 200, 300] and short["per_seed"][0] == [0.0, 1.0, 2.0]


def test_compare_resolves_a_gap_and_not_an_overlap() -> None:
    results = _tool()
    far = results.compare(_row("dpo", "e", [10.0, 11.0, 12.0, 13.0]),
                          _row("ppo", "e", [1.0, 2.0, 3.0, 4.0]))
    assert far["verdict"] == "higher" and far["diff"] == 9.0 and far["ci95"][0] > 0
    assert results.compare(_row("ppo", "e", [1.0, 2.0, 3.0, 4.0]),
                           _row("dpo", "e", [10.0, 11.0, 12.0, 13.0]))["verdict"] == "lower"
    for few in ([5.0], []):  # one seed, or none, on a side: no interval, no verdict
        d = results.compare(_row("dpo", "e", few), _row("ppo", "e", [1.0, 2.0]))
        assert d["verdict"] == "too few seeds" and np.isnan(d["ci95"]).all()
    mixed = results.compare(_row("dpo", "e", [1.0, 9.0, 2.0, 8.0]),
                            _row("ppo", "e", [3.0, 7.0, 4.0, 6.0]))
    assert mixed["verdict"] == "not resolved" and mixed["ci95"][0] < 0 < mixed["ci95"][1]


def test_comparison_section_states_the_claim_per_task(tmp_path, monkeypatch) -> None:
    results = _tool()
    monkeypatch.setattr(results, "DOC", tmp_path / "results.md")
    rows = [_row("ppo", "gymnax/A", [1.0, 2.0, 3.0, 4.0]),
            _row("dpo", "gymnax/A", [10.0, 11.0, 12.0, 13.0]),
            _row("ppo", "gymnax/B", [10.0, 11.0, 12.0, 13.0]),
            _row("dpo", "gymnax/B", [1.0, 2.0, 3.0, 4.0]),
            _row("ppo", "gymnax/C", [1.0, 2.0, 3.0, 4.0])]  # no DPO row: not compared
    for r in rows:
        v = np.array(r["greedy"]["per_seed"])
        r["greedy"].update(iqm=float(np.mean(v[1:3])), ci95=[float(v.min()), float(v.max())])
    text = "\n".join(results.comparison_lines("minatar", rows))
    assert "| gymnax/A |" in text and "| gymnax/B |" in text and "gymnax/C" not in text
    assert "| higher | supported |" in text and "| lower | contradicted |" in text
    assert "the claim is supported on A; contradicted on B (supported:" in text
    figure = results.comparison_figure("minatar", results.COMPARISONS["minatar"][0],
                                       ["gymnax/A", "gymnax/B"],
                                       {(r["algo"], r["env"]): r for r in rows})
    assert figure == tmp_path / "figures" / "results-minatar-dpo-vs-ppo.png" and figure.is_file()


def test_curves_figure_draws_each_task_with_its_algorithms(tmp_path, monkeypatch) -> None:
    results = _tool()
    monkeypatch.setattr(results, "DOC", tmp_path / "results.md")
    curve = results.compact_curve(np.arange(1.0, 41.0) * 1000,
                                  np.stack([np.linspace(0, 10, 40), np.linspace(0, 12, 40)], 1),
                                  points=10)
    rows = [{"algo": a, "env": e, "curve": curve} for a in ("ppo", "dpo")
            for e in ("gymnax/A", "gymnax/B")]
    out = results.write_curves_figure("minatar", rows)
    assert out == tmp_path / "figures" / "results-minatar-curves.png" and out.stat().st_size


def test_small_rows_print_two_decimals_and_board_games_their_losses() -> None:
    """A row whose figures are all below 10 in size (a board game's +1/0/-1 return) prints two
    decimals, so its IQM sits inside its printed interval; a board game's row states its
    games won, drawn and lost and the worst seed's losses (what "never loses" is read from)."""
    results = _tool()
    small = {"iqm": 0.945, "ci95": [0.94, 0.96]}
    assert results._digits(small) == 2
    assert results._stat(small, results._digits(small)) == "0.94 [0.94, 0.96]"
    assert results._digits(small, {"iqm": 500.0, "ci95": [500.0, 500.0]}) == 1
    row = {"outcomes": {"win_rate": [0.95, 0.9], "draw_rate": [0.05, 0.08],
                        "loss_rate": [0.0, 0.02]}}
    assert results.outcome_note(row) == ("; won / drawn / lost 92.5 / 6.5 / 1.0%, worst seed "
                                         "lost 2.0%")
    assert results.outcome_note({}) == ""


def test_rows_name_their_machine_or_say_it_was_not_recorded() -> None:
    results = _tool()
    meta = {"commit": "abc1234", "date": "2026-01-01"}
    assert results._commit_cell({}, meta) == "`abc1234` | 2026-01-01 | not recorded"
    assert results._commit_cell({"commit": "def5678", "machine": "AMD EPYC, 1 device, jax 0.1"},
                                meta) == "`def5678` | 2026-01-01 | AMD EPYC, 1 device, jax 0.1"


def test_a_kept_row_stopped_midway_continues_to_the_uninterrupted_result(tmp_path,
                                                                          monkeypatch) -> None:
    """A `--keep-runs` row whose run stopped before its end (here: its summary and newest
    checkpoint gone, as a closed session leaves it) continues from the checkpoint it has, to the
    per-seed returns and curve of the row run in one go, and says it took two sessions; a
    finished kept run is not continued but run afresh."""
    from dataclasses import replace

    results = _tool()
    request = results.task_request  # checkpoints every 2 of the run's 10 updates
    monkeypatch.setattr(results, "task_request",
                        lambda *a: replace(request(*a), log_every=2, checkpoint_every=2))
    task = results.Task("qlearning", "native/GridWorld", steps=20_000, eval_episodes=4)
    whole = results.run_task(task, 2, tmp_path / "whole")
    kept = tmp_path / "kept"
    first = results.run_task(task, 2, kept, kept=True)
    run_dir = Path(first.pop("run_dir"))
    checkpoints = sorted((run_dir / "checkpoints").iterdir())
    assert len(checkpoints) >= 2, checkpoints
    (run_dir / "summary.json").unlink()
    checkpoints[-1].unlink()  # the final one: the run now stops short of its end
    assert results.unfinished_run(kept, task, 2) == run_dir
    assert results.unfinished_run(kept, task, 3) is None  # another row's seeds
    again = results.run_task(task, 2, kept, kept=True)
    assert Path(again.pop("run_dir")) == run_dir
    assert again["sessions"] == 2 and "sessions" not in whole
    for key in ("greedy", "training", "curve"):
        assert again[key] == whole[key] == first[key], key
    assert results._train_seconds(again).endswith(" (2 sessions)")
    fresh = results.run_task(task, 2, kept, kept=True)  # the kept run is finished now
    assert Path(fresh.pop("run_dir")) != run_dir and "sessions" not in fresh


def test_a_continued_row_names_its_machines_and_commits() -> None:
    """A row whose run was resumed lists each machine that computed it once, in order, and
    names the commit its run started at where it ended at another."""
    results = _tool()
    here = {"processor": "AMD EPYC", "devices": ["cpu:0"], "jax_version": "0.10.2"}
    config = {**here, "resumed": [{**here, "processor": "Intel Xeon"}, here]}
    assert results.machines(config) == ("AMD EPYC, 1 device, jax 0.10.2 then Intel Xeon, "
                                        "1 device, jax 0.10.2")
    assert results.machines(here) == "AMD EPYC, 1 device, jax 0.10.2"
    row = results._stamped({"started_commit": "aaa1111"}, "bbb2222", "2026-01-02")
    meta = {"commit": "ccc3333", "date": "2026-01-01"}
    assert results._commit_cell(row, meta) == "`aaa1111` → `bbb2222` | 2026-01-02 | not recorded"
    same = results._stamped({"started_commit": "bbb2222"}, "bbb2222", "2026-01-02")
    assert "started_commit" not in same
    assert results._commit_cell(same, meta).startswith("`bbb2222` | 2026-01-02")


def test_a_stopped_suite_says_what_becomes_of_the_row(tmp_path) -> None:
    from rl_cli.errors import RunStopped, UserError

    results = _tool()
    task = results.Task("dqn", "gymnax/Breakout-MinAtar")
    line = results.stopped_line(task, RunStopped("stopped by SIGTERM at a chunk boundary", 143),
                                tmp_path, [{}])
    assert line.startswith("dqn on gymnax/Breakout-MinAtar: stopped by SIGTERM")
    assert "same --keep-runs continues it" in line and "(1 row(s) before it reported)" in line
    line = results.stopped_line(task, UserError("this version of the code builds the run "
                                                "differently"), tmp_path, [])
    assert f"move its run out of {tmp_path}" in line and "reported" not in line
    assert results.stopped_line(task, KeyboardInterrupt(), None, []) == (
        "dqn on gymnax/Breakout-MinAtar: stopped by SIGINT")
