"""Learning curves from `rl run` directories: the mean return of the episodes that ended in each
logged chunk (metrics.jsonl), one line per member plus their mean, one panel per run directory.

    uv run python tools/plot_learning_curves.py runs/ppo-brax_inverted_pendulum-... [...] \
        --out docs/figures/brax-ppo.png [--baseline 6.17 --baseline-label "random legal"]

Chunks in which no episode of a member ended have no point for that member (a gap, not a zero).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def load(run_dir: Path) -> tuple[dict, np.ndarray, np.ndarray]:
    """`(config, steps [T], returns [T, members])` with NaN where no episode ended."""
    config = json.loads((run_dir / "config.json").read_text())
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    steps = np.array([r["env_steps"] for r in rows])
    returns = np.array([[np.nan if v is None else v for v in r["episode_return"]] for r in rows],
                       dtype=np.float64)
    return config, steps, returns


def title_of(run_dir: Path, config: dict) -> str:
    title = f"{config.get('algo', '')} on {config.get('env', run_dir.name)}"
    opponent = (config.get("env_kwargs") or {}).get("opponent")
    if opponent:
        title += f" (vs {opponent})"
    summary = run_dir / "summary.json"
    if summary.exists():
        mean = json.loads(summary.read_text()).get("final_return_mean")
        if mean is not None:
            title += f"\nfinal mean {mean:.2f}"
    return title


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", type=Path, help="rl run directories (one panel each)")
    p.add_argument("--out", "-o", type=Path, required=True, help="PNG to write")
    p.add_argument("--baseline", type=float, default=None, help="a horizontal reference line")
    p.add_argument("--baseline-label", default="baseline")
    p.add_argument("--title", default=None, help="replaces the title (single run only)")
    a = p.parse_args()
    fig, axes = plt.subplots(1, len(a.runs), figsize=(5 * len(a.runs), 3.6), squeeze=False)
    for ax, run in zip(axes[0], a.runs, strict=True):
        config, steps, returns = load(run)
        seeds = config.get("seeds", list(range(returns.shape[1])))
        sparse = np.isfinite(returns).sum(axis=0).max() < 20
        for m, seed in enumerate(seeds):
            ok = np.isfinite(returns[:, m])
            ax.plot(steps[ok], returns[ok, m], lw=1, alpha=0.6, marker="o" if sparse else None,
                    ms=3, label=f"seed {seed}")
        if returns.shape[1] > 1:
            with np.errstate(all="ignore"):  # all-NaN chunks stay NaN
                mean = np.nanmean(returns, axis=1)
            ok = np.isfinite(mean)
            ax.plot(steps[ok], mean[ok], lw=2, color="black", label="mean")
        if a.baseline is not None:
            ax.axhline(a.baseline, color="grey", ls="--", lw=1, label=a.baseline_label)
        ax.set_title(a.title if a.title and len(a.runs) == 1 else title_of(run, config),
                     fontsize=9)
        ax.set_xlabel("environment steps per member")
        ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
        ax.set_ylabel("episode return (episodes ending in the chunk)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(a.out, dpi=110)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
