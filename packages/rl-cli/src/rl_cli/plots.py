"""Learning curves of `rl run` directories (matplotlib's object-oriented API on the Agg canvas:
files only, no screen, and no pyplot, so the caller's backend and figures are left alone).

A run's `metrics.jsonl` has, per logged chunk, each member's mean return of the episodes that
ended in it (`null` when none did: a gap in that member's curve, never a zero). `curves.png`
(written by `rl run`) shows each member faintly and their mean with a 95% confidence band over
members (Student t over the members with a value in that chunk); `rl plot` overlays several runs'
means and bands, each labelled by its algorithm, environment and the settings that differ
between the runs. `rl plot --metric NAME` draws another logged quantity instead of the return
(`loss/approx_kl`, `loss/entropy`: why two objectives part ways): one value per chunk, or one
per member where the run logs it so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from rl_cli.errors import UserError
from rl_cli.rundir import read_run_config
from rl_cli.stats import mean_ci95

RETURN = "episode_return"  # metrics.jsonl's per-member return of the episodes ending in a chunk


class Curves(NamedTuple):
    run_dir: Path
    config: dict[str, Any]  # config.json
    steps: np.ndarray  # [T] environment steps per member at the end of each logged chunk
    returns: np.ndarray  # [T, M], NaN where no episode of that member ended in the chunk
    # (with another `metric`: its values, [T, 1] where the run logs one value per chunk)
    eval_steps: np.ndarray  # [E] steps of the periodic greedy evaluations (`--eval-every`)
    eval_returns: np.ndarray  # [E, M] each member's mean greedy return there

    @property
    def mean_band(self) -> tuple[np.ndarray, np.ndarray]:
        """Per chunk: the mean over members and the half-width of its 95% CI (NaN without
        data)."""
        return mean_band(self.returns)


def mean_band(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`values [T, M]` (NaN where a member has no value) -> per row `t` the mean over members
    and the half-width of its 95% Student-t interval, each `[T]` (NaN without data)."""
    rows = [mean_ci95(r) for r in values]
    return np.array([m for m, _ in rows]), np.array([c for _, c in rows])


def load_curves(run_dir: Path, metric: str = RETURN) -> Curves:
    """A run directory's curves of `metric` (a key of its metrics.jsonl: the return by default),
    or a UserError saying what is missing."""
    run_dir = Path(run_dir)
    config = read_run_config(run_dir, ("metrics.jsonl",), keys=())
    try:
        rows = [json.loads(line) for line in
                (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    except json.JSONDecodeError as e:
        raise UserError(f"'{run_dir}' has unreadable metrics ({type(e).__name__}: {e}); it is "
                        "not a directory `rl run` wrote") from None
    evals = [r for r in rows if r.get("eval")]  # periodic evaluations: their own records
    rows = [r for r in rows if not r.get("eval")]
    if not rows:
        raise UserError(f"'{run_dir}/metrics.jsonl' is empty: the run logged no chunk yet")
    if not any(metric in r for r in rows):
        # A metric may be absent from some chunks (a win rate where no episode ended).
        logged = sorted({k for r in rows for k, v in r.items()
                         if not isinstance(v, dict) and k not in ("update", "env_steps")})
        raise UserError(f"'{run_dir}' logged no metric '{metric}'; pass --metric one of: "
                        f"{', '.join(logged)}")
    try:
        steps = np.array([r["env_steps"] for r in rows], dtype=np.float64)
        # A chunk without the metric is a gap, as a chunk without an ended episode is.
        values = [r.get(metric) for r in rows]
        width = max(len(v) if isinstance(v, list) else 1 for v in values)
        returns = _matrix([v if isinstance(v, list) else [None] * width if v is None else [v]
                           for v in values])
        eval_steps = np.array([r["env_steps"] for r in evals], dtype=np.float64)
        eval_returns = _matrix([r["greedy_return"] for r in evals])
    except (KeyError, TypeError, ValueError) as e:
        raise UserError(f"'{run_dir}' has unreadable metrics ({type(e).__name__}: {e}); it is "
                        "not a directory `rl run` wrote") from None
    return Curves(run_dir, config, steps, returns, eval_steps, eval_returns)


def palette() -> list[str]:
    """matplotlib's colour cycle: the i-th run or algorithm of a figure takes colour i (mod its
    length) in every panel."""
    import matplotlib

    return matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]


def _matrix(rows: list[list[float | None]]) -> np.ndarray:
    """`[T, M]` floats from JSON rows, null as NaN."""
    if not rows:
        return np.zeros((0, 0))
    return np.array([[np.nan if v is None else v for v in r] for r in rows],
                    dtype=np.float64).reshape(len(rows), -1)


def new_figure(size: tuple[float, float]) -> Any:
    """A figure on an Agg canvas and its one axes."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig, fig.subplots()


def warm_up() -> None:
    """Imports what `write_curves` needs and loads its fonts (drawing a small figure in memory):
    about 0.3 s that `rl run` spends while its program trains (`after.AfterTraining`)."""
    import io

    fig, ax = new_figure((1, 1))
    ax.set_title("warm-up")
    ax.set_xlabel("0123456789")
    fig.savefig(io.BytesIO(), format="png")


def save_figure(fig: Any, out: Path) -> None:
    """Writes the figure atomically (a temporary file renamed over `out`)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    fig.savefig(tmp, dpi=110, format=out.suffix.lstrip(".") or "png", bbox_inches="tight")
    tmp.replace(out)


def draw_run(ax: Any, curves: Curves, label: str | None = None, members: bool = True,
             color: Any = None, evaluation: bool = True) -> None:
    """Each member faintly (when `members`), then the mean over members with its 95% band, and
    (when `evaluation` and the run has them) the periodic greedy evaluations' mean, dashed."""
    steps, returns = curves.steps, curves.returns
    if members:
        for m in range(returns.shape[1]):
            ok = np.isfinite(returns[:, m])
            ax.plot(steps[ok], returns[ok, m], lw=0.8, alpha=0.3, color=color or "tab:blue")
    mean, band = curves.mean_band
    ok = np.isfinite(mean)
    line = ax.plot(steps[ok], mean[ok], lw=2, color=color or "black",
                   label=label or f"mean of {returns.shape[1]}")[0]
    if returns.shape[1] > 1:
        ax.fill_between(steps[ok], (mean - band)[ok], (mean + band)[ok], alpha=0.2,
                        color=line.get_color(), lw=0)
    if evaluation and len(curves.eval_steps):
        ev = np.array([mean_ci95(r)[0] for r in curves.eval_returns])
        ok = np.isfinite(ev)
        ax.plot(curves.eval_steps[ok], ev[ok], lw=1.5, ls="--", marker=".",
                color=line.get_color(), label=f"{line.get_label()}: greedy evaluation")


def _decorate(ax: Any, title: str, legend: bool = True, metric: str = RETURN) -> None:
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("environment steps per member")
    ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
    ax.set_ylabel("episode return (episodes ending in the chunk)" if metric == RETURN
                  else f"{metric} (per logged chunk)")
    ax.grid(alpha=0.3)
    if legend:
        ax.legend(fontsize=7)


def title_of(curves: Curves) -> str:
    config = curves.config
    title = f"{config.get('algo', '')} on {config.get('env', curves.run_dir.name)}"
    opponent = (config.get("env_kwargs") or {}).get("opponent")
    if opponent:
        title += f" (vs {opponent})"
    return title + f", {curves.returns.shape[1]} member(s)"


def write_curves(run_dir: Path, out: Path | None = None) -> Path:
    """`curves.png` of one run: members faint, the mean and its 95% band."""
    curves = load_curves(run_dir)
    fig, ax = new_figure((6, 3.8))
    draw_run(ax, curves)
    _decorate(ax, title_of(curves))
    fig.tight_layout()
    out = out or Path(run_dir) / "curves.png"
    save_figure(fig, out)
    return out


def labels_for(runs: list[Curves]) -> list[str]:
    """`algo env` plus the preset, config fields and hyperparameters that differ between the
    runs (so PPO vs DPO reads 'ppo ...' / 'dpo ...', and an lr sweep shows each lr)."""

    def settings(c: Curves) -> dict[str, Any]:
        cfg = c.config
        flat = {"preset": cfg.get("preset")}
        flat |= {k: v for k, v in (cfg.get("config") or {}).items()}
        flat |= {k: v for k, v in (cfg.get("hparams") or {}).items()}
        return flat

    all_settings = [settings(c) for c in runs]
    keys = sorted({k for s in all_settings for k in s})
    differ = [k for k in keys if len({json.dumps(s.get(k), sort_keys=True)
                                       for s in all_settings}) > 1]
    labels = []
    for c, s in zip(runs, all_settings, strict=True):
        parts = [str(c.config.get("algo", "")), str(c.config.get("env", c.run_dir.name))]
        parts += [f"{k}={s[k]}" for k in differ  # a setting this run does not have: nothing
                  if s.get(k) is not None and k != "total_timesteps"]
        labels.append(" ".join(parts))
    if len(set(labels)) < len(labels):  # identical settings: tell them apart by directory
        labels = [f"{label} ({c.run_dir.name})" for label, c in zip(labels, runs, strict=True)]
    return labels


def plot_runs(run_dirs: list[Path], out: Path, labels: list[str] | None = None,
              members: bool = False, evaluation: bool = False, metric: str = RETURN) -> Path:
    """Several runs, one panel per environment: each run's mean over members with its 95% band
    (and its members faintly with `members`, its periodic greedy evaluations dashed with
    `evaluation`), labelled by `labels` or by `labels_for` in one legend under the panels;
    `metric` another logged quantity in place of the return."""
    if evaluation and metric != RETURN:
        raise UserError(f"--eval draws the greedy evaluations' returns beside the return; with "
                        f"--metric {metric} drop --eval")
    runs = [load_curves(d, metric) for d in run_dirs]
    if labels is not None and len(labels) != len(runs):
        raise UserError(f"--label was given {len(labels)} times for {len(runs)} runs; give one "
                        "per run or none")
    if out.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise UserError(f"--out {out}: the picture's name must end in .png, .svg or .pdf")
    import textwrap

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    # One panel per environment (returns of different tasks share no scale), every run in its
    # colour throughout, one legend under the panels, each label wrapped to the figure's width.
    envs = sorted({str(c.config.get("env")) for c in runs})
    fig = Figure(figsize=(max(7.0, 5.0 * len(envs)), 4.2))
    FigureCanvasAgg(fig)
    axes = dict(zip(envs, fig.subplots(1, len(envs), squeeze=False)[0], strict=True))
    colors = palette()
    width = int(14 * fig.get_figwidth())  # characters of a 7-point label across the figure
    for i, (curves, label) in enumerate(zip(runs, labels or labels_for(runs), strict=True)):
        draw_run(axes[str(curves.config.get("env"))], curves, textwrap.fill(label, width),
                 members, colors[i % len(colors)], evaluation)
    # A metric logged once per chunk (the mean over members already) has no band.
    banded = any(c.returns.shape[1] > 1 for c in runs)
    for env, ax in axes.items():
        _decorate(ax, f"{env}: mean over members, 95% band" if banded else f"{env}: {metric}",
                  legend=False, metric=metric)
    handles, names = [], []
    for ax in axes.values():
        for h, n in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.append(h)
            names.append(n)
    fig.legend(handles, names, loc="upper center", bbox_to_anchor=(0.5, 0.0), fontsize=7,
               ncols=1, frameon=False)
    fig.tight_layout()
    save_figure(fig, out)
    return out


def plot_panels(run_dirs: list[Path], out: Path, baseline: float | None = None,
                baseline_label: str = "baseline", title: str | None = None) -> Path:
    """One panel per run (each as `write_curves` draws it), side by side, with an optional
    horizontal reference line (e.g. a random policy's return) on each; `title` replaces the
    title of a single run's panel."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5 * len(run_dirs), 3.6))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(run_dirs), squeeze=False)[0]
    for ax, run in zip(axes, run_dirs, strict=True):
        curves = load_curves(run)
        draw_run(ax, curves)
        if baseline is not None:
            ax.axhline(baseline, color="grey", ls="--", lw=1, label=baseline_label)
        _decorate(ax, title if title and len(run_dirs) == 1 else title_of(curves))
    fig.tight_layout()
    save_figure(fig, out)
    return out
