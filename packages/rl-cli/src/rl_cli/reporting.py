"""Everything a run writes or shows: TensorBoard events, metrics.jsonl, the progress bar and the
final summary table. Fed on the host after each compiled chunk of updates."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from rich.table import Table

from rl_cli.stats import finite_or_none, mean_ci95
from rl_cli.sweep import OUTCOMES
from rl_cli.trackers import TrackedWriter, Tracker

# Metrics that count or sum over episodes; everything else is averaged over a chunk.
_EPISODE_KEYS = ("episode_return_sum", "episode_length_sum", "episode_count", "episode_won_sum",
                 "episode_achievements_sum")


def summarise_chunk(metrics: dict[str, np.ndarray]) -> dict[str, Any]:
    """`[M, L]` metrics of one chunk -> per-member episode means (NaN when no episode finished)
    and chunk means of every other metric, averaged over members; `win_rate` (the members'
    mean) where the environment reports wins and an episode ended; `achievement_rates` `[K]`
    (each achievement's share of the chunk's finished episodes, all members pooled) where it
    reports achievements (Craftax) and an episode ended."""
    count = metrics["episode_count"].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ret = np.where(count > 0, metrics["episode_return_sum"].sum(1) / np.maximum(count, 1),
                       np.nan)
        length = np.where(count > 0, metrics["episode_length_sum"].sum(1) / np.maximum(count, 1),
                          np.nan)
    out: dict[str, Any] = {"episode_return": ret, "episode_length": length,
                           "episodes": count}
    if "episode_won_sum" in metrics:  # a game with a winner: the fraction of episodes won
        won = metrics["episode_won_sum"].sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = _nanmean(np.where(count > 0, won / np.maximum(count, 1), np.nan))
        if math.isfinite(rate):
            out["win_rate"] = rate
    if "episode_achievements_sum" in metrics and count.sum() > 0:  # [M, L, K] unlock counts
        out["achievement_rates"] = metrics["episode_achievements_sum"].sum((0, 1)) / count.sum()
    for k, v in metrics.items():
        if k not in _EPISODE_KEYS:
            out[k] = float(np.mean(v))
    return out


def _nanmean(x: np.ndarray) -> float:
    x = np.asarray(x, np.float64)
    return float(np.mean(x[np.isfinite(x)])) if np.any(np.isfinite(x)) else math.nan


def purge_step(resume_at: int | None, steps_per_update: int) -> int | None:
    """TensorBoard's `purge_step` for a run resumed after `resume_at` updates: events logged past
    the checkpoint (by the session that was interrupted) are dropped, so no step shows twice."""
    return None if resume_at is None else resume_at * steps_per_update + 1


def open_metrics(run_dir: Path, resume_at: int | None) -> Any:
    """metrics.jsonl for appending: a new file, or for a run resumed after `resume_at` updates
    the records up to there (later ones, logged after the checkpoint, are about to be logged
    again), rewritten atomically."""
    path = run_dir / "metrics.jsonl"
    if resume_at is None:
        return open(path, "w")
    kept = []
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            if json.loads(line)["update"] <= resume_at:
                kept.append(line)
        except (json.JSONDecodeError, KeyError, TypeError):
            continue  # a line cut short by the kill, logged after the checkpoint anyway
    tmp = path.with_name(".metrics.jsonl.tmp")
    tmp.write_text("".join(line + "\n" for line in kept))
    tmp.replace(path)
    return open(path, "a")


class _Logger:
    """What a run's and a sweep's logger share: the aggregate TensorBoard writer (`tb/`),
    metrics.jsonl, and a copy of every TensorBoard scalar to `tracker` (`--track`) when there is
    one. `resume_at`: the run continues after that many updates (`rl resume`): metrics.jsonl
    keeps its records up to there and drops later ones (logged after the checkpoint, so about to
    be logged again), and TensorBoard purges its events past that step."""

    def __init__(self, run_dir: Path, steps_per_update: int, resume_at: int | None,
                 elapsed_offset: float, tracker: Tracker | None):
        self.steps_per_update = steps_per_update
        self.elapsed_offset = elapsed_offset
        self.tracker = tracker
        self.purge = purge_step(resume_at, steps_per_update)
        self.writer = TrackedWriter(run_dir / "tb", self.purge, tracker)
        self.jsonl = open_metrics(run_dir, resume_at)

    def _record(self, record: dict[str, Any]) -> None:
        """One line of metrics.jsonl; the tracker gets the scalars logged since the last."""
        self.jsonl.write(json.dumps(record) + "\n")
        self.jsonl.flush()
        if self.tracker is not None:
            self.tracker.commit()

    def _close(self) -> None:
        self.writer.flush()
        self.writer.close()
        self.jsonl.close()
        if self.tracker is not None:
            self.tracker.finish()


class RunLogger(_Logger):
    """TensorBoard (one series per member and the aggregate) plus metrics.jsonl (`_Logger`)."""

    def __init__(self, run_dir: Path, member_names: list[str], steps_per_update: int,
                 resume_at: int | None = None, elapsed_offset: float = 0.0,
                 tracker: Tracker | None = None, achievement_names: list[str] | None = None):
        super().__init__(run_dir, steps_per_update, resume_at, elapsed_offset, tracker)
        self.names = member_names
        self.achievement_names = achievement_names  # the environment's, where it has them

    def log_eval(self, updates_done: int, returns: np.ndarray) -> None:
        """A periodic greedy evaluation (`--eval-every`): each member's mean return, as its own
        metrics.jsonl record (`"eval": true`) and TensorBoard's `eval/greedy_return/...`."""
        step = updates_done * self.steps_per_update
        if np.any(np.isfinite(returns)):
            self.writer.add_scalar("eval/greedy_return/mean", _nanmean(returns), step)
        for name, r in zip(self.names, returns, strict=True):
            if np.isfinite(r):
                self.writer.add_scalar(f"eval/greedy_return/{name}", float(r), step)
        record = {"update": updates_done, "env_steps": step, "eval": True,
                  "greedy_return_mean": finite_or_none(_nanmean(returns)),
                  "greedy_return": [finite_or_none(r) for r in returns]}
        self._record(record)

    def log(self, updates_done: int, elapsed: float, chunk: dict[str, Any]) -> None:
        elapsed += self.elapsed_offset
        step = updates_done * self.steps_per_update
        ret, length = chunk["episode_return"], chunk["episode_length"]
        w = self.writer
        if np.any(np.isfinite(ret)):
            w.add_scalar("episode_return/mean", _nanmean(ret), step)
            w.add_scalar("episode_length/mean", _nanmean(length), step)
        for name, r in zip(self.names, ret, strict=True):
            if np.isfinite(r):
                w.add_scalar(f"episode_return/{name}", float(r), step)
        sps = step * len(self.names) / max(elapsed, 1e-9)
        w.add_scalar("perf/steps_per_second", sps, step)
        scalars = {k: v for k, v in chunk.items() if isinstance(v, float)}
        for k, v in scalars.items():
            w.add_scalar(k, v, step)
        achievements = self._achievements(chunk.get("achievement_rates"))
        for k, v in achievements.items():
            w.add_scalar(f"achievements/{k}", v, step)
        record = {
            "update": updates_done,
            "env_steps": step,
            "seconds": round(elapsed, 4),
            "steps_per_second": sps,
            "episode_return_mean": finite_or_none(_nanmean(ret)),
            "episode_return": [finite_or_none(r) for r in ret],
            "episode_length_mean": finite_or_none(_nanmean(length)),
            "episodes": [int(c) for c in chunk["episodes"]],
            **{k: finite_or_none(v) for k, v in scalars.items()},
            **({"achievement_rates": achievements} if achievements else {}),
        }
        self._record(record)

    def _achievements(self, rates: np.ndarray | None) -> dict[str, float]:
        """Each achievement's rate by the environment's name for it (its index otherwise)."""
        if rates is None:
            return {}
        names = self.achievement_names or [str(k) for k in range(len(rates))]
        return {n: float(r) for n, r in zip(names, rates, strict=True)}

    def close(self) -> None:
        self._close()


def summary_table(names: list[str], finals: np.ndarray, summary: dict[str, Any],
                  flags: dict[str, str] | None = None) -> Table:
    """The final returns per member; `flags` marks members by name (`non-finite`, `diverging`,
    from rl_cli.health) in an extra column and the caption."""
    mean, ci = mean_ci95(finals)
    flags = flags or {}
    t = Table(title=f"{summary['algo']} on {summary['env']}: final mean episodic return",
              show_lines=False)
    greedy = summary.get("greedy_eval_return_per_member")
    t.add_column("member")
    t.add_column("final return", justify="right")
    if greedy is not None:
        t.add_column(f"greedy eval ({summary['greedy_eval_episodes']} ep.)", justify="right")
    if flags:
        t.add_column("health")
        t.caption = (f"{len(flags)} member(s) flagged: {', '.join(sorted(set(flags.values())))} "
                     "(see health_per_member in summary.json)")

    def num(x: Any) -> str:
        return f"{x:.2f}" if x is not None and math.isfinite(x) else "-"

    for i, (name, r) in enumerate(zip(names, finals, strict=True)):
        cells = [name, f"{r:.2f}" if math.isfinite(r) else "no episode ended"]
        cells += [num(greedy[i])] if greedy is not None else []
        t.add_row(*cells, *([flags.get(name, "ok")] if flags else []))
    t.add_section()
    row = ["mean ± 95% CI", f"{mean:.2f} ± {ci:.2f}" if math.isfinite(mean) else "-"]
    if greedy is not None:
        g = summary.get("greedy_eval_mean")
        row.append(f"{g:.2f} ± {summary['greedy_eval_ci95']:.2f}" if g is not None else "-")
    t.add_row(*row)
    if summary.get("final_score_pct_mean") is not None:
        t.add_row("score (% of max return)", f"{summary['final_score_pct_mean']:.2f} ± "
                                             f"{summary['final_score_pct_ci95']:.2f}")
    if summary.get("final_win_rate_mean") is not None:
        t.add_row("final win rate", f"{summary['final_win_rate_mean']:.1%} ± "
                                    f"{summary['final_win_rate_ci95']:.1%}")
    t.add_row("steps/s (all members)", f"{summary['steps_per_second']:,.0f}")
    t.add_row("compile s", f"{summary['compile_seconds']:.2f}")
    t.add_row("train s", f"{summary['run_seconds']:.2f}")
    return t


class SweepLogger(_Logger):
    """TensorBoard for a sweep: one run directory per member (`tb/<member>`) holding its
    episode-return series and an hparams-plugin session with its hyperparameters, so TensorBoard's
    HPARAMS tab can filter and sort members; `tb/` itself gets the aggregate; plus metrics.jsonl.
    A `tracker` gets every scalar, a member's as `<member>/<tag>`."""

    def __init__(self, run_dir: Path, members: list[Any], hparams: list[dict[str, float]],
                 steps_per_update: int, resume_at: int | None = None,
                 elapsed_offset: float = 0.0, tracker: Tracker | None = None):
        from tensorboardX.summary import hparams as hparams_summary

        super().__init__(run_dir, steps_per_update, resume_at, elapsed_offset, tracker)
        self.last_step = 0 if resume_at is None else resume_at * steps_per_update
        self.members = members
        self.hparams = hparams
        self.member_writers = []
        for m, hp in zip(members, hparams, strict=True):
            w = TrackedWriter(run_dir / "tb" / m.name, self.purge, tracker,
                              prefix=f"{m.name}/")
            if resume_at is None:
                exp, ssi, sei = hparams_summary({**hp, "seed": m.seed, "point": m.point},
                                                {"hparam/final_return": 0.0})
                for s in (exp, ssi, sei):
                    w.file_writer.add_summary(s)
            self.member_writers.append(w)

    def log(self, updates_done: int, elapsed: float, chunk: dict[str, Any]) -> None:
        elapsed += self.elapsed_offset
        step = updates_done * self.steps_per_update
        self.last_step = step
        ret, length = chunk["episode_return"], chunk["episode_length"]
        for w, r, n in zip(self.member_writers, ret, length, strict=True):
            if np.isfinite(r):
                w.add_scalar("episode_return", float(r), step)
                w.add_scalar("episode_length", float(n), step)
        if np.any(np.isfinite(ret)):
            self.writer.add_scalar("episode_return/mean", _nanmean(ret), step)
        sps = step * len(self.members) / max(elapsed, 1e-9)
        self.writer.add_scalar("perf/steps_per_second", sps, step)
        record = {"update": updates_done, "env_steps": step, "seconds": round(elapsed, 4),
                  "steps_per_second": sps, "episode_return_mean": finite_or_none(_nanmean(ret)),
                  "episode_return": [finite_or_none(r) for r in ret]}
        self._record(record)

    def close(self, final_returns: np.ndarray | None = None) -> None:
        """`final_returns` (one per member; None when the sweep was stopped early) go to
        TensorBoard's HPARAMS tab (at step 0, where its hparams session is) and to the tracker
        at the last logged step (a tracker drops steps that go back)."""
        for i, w in enumerate(self.member_writers):
            r = None if final_returns is None else final_returns[i]
            if r is not None and np.isfinite(r):
                w.writer.add_scalar("hparam/final_return", float(r), 0)
                if self.tracker is not None:
                    self.tracker.scalar(f"{w.prefix}hparam/final_return", float(r),
                                        self.last_step)
            w.flush()
            w.close()
        self._close()


def ranking_table(result: Any, summary: dict[str, Any]) -> Table:
    """Points ranked by mean final return, with the 95% CI over their seeds, and the points'
    mean win rate or score where the environment reports them (`sweep.point_outcomes`)."""
    t = Table(title=f"sweep of {summary['algo']} on {summary['env']}: points ranked by mean "
                    f"final return", show_lines=False)
    t.add_column("rank", justify="right")
    t.add_column("point", justify="right")
    for k in result.swept:
        t.add_column(k, justify="right")
    t.add_column("final return (mean ± 95% CI)", justify="right")
    outcomes = {f"{o.column}_mean": o for o in OUTCOMES.values()}
    shown = [k for k in outcomes if summary["ranking"] and k in summary["ranking"][0]]
    for k in shown:
        t.add_column(outcomes[k].heading, justify="right")
    t.add_column("seeds", justify="right")
    for r, entry in zip(result.ranking, summary["ranking"], strict=True):
        value = f"{r.mean:.2f} ± {r.ci95:.2f}" if math.isfinite(r.mean) else "no episode ended"
        t.add_row(str(r.rank), str(r.point), *(f"{r.hparams[k]:.4g}" for k in result.swept),
                  value, *("–" if entry[k] is None else outcomes[k].fmt.format(entry[k])
                           for k in shown), str(r.num_seeds))
    t.caption = (f"{summary['num_members']} members · {summary['steps_per_second']:,.0f} "
                 f"steps/s · compiled once in {summary['compile_seconds']:.2f} s")
    return t
