"""Learning curves of an `rl run` directory: the mean episodic return of each member per logged
chunk (from metrics.jsonl) against environment steps, with an optional horizontal baseline.

    uv run python tools/plot_run.py runs/<run> --out docs/figures/x.png --baseline 6.17 \
        --baseline-label "uniform random legal policy"
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--baseline", type=float, default=None)
    p.add_argument("--baseline-label", default="baseline")
    p.add_argument("--title", default=None)
    a = p.parse_args()
    rows = [json.loads(line) for line in (a.run_dir / "metrics.jsonl").read_text().splitlines()]
    config = json.loads((a.run_dir / "config.json").read_text())
    steps = [r["env_steps"] for r in rows]
    per_member = list(zip(*[r["episode_return"] for r in rows], strict=True))
    seeds = config.get("seeds", list(range(len(per_member))))
    fig, ax = plt.subplots(figsize=(7, 4))
    for seed, curve in zip(seeds, per_member, strict=False):
        ax.plot(steps, curve, lw=1.2, label=f"seed {seed}")
    if a.baseline is not None:
        ax.axhline(a.baseline, color="k", ls="--", lw=1, label=a.baseline_label)
    ax.set_xlabel("environment steps per member")
    ax.set_ylabel("mean episodic return (episodes ending in the chunk)")
    ax.set_title(a.title or f"{config.get('algo', '')} on {config.get('env', '')}")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(a.out, dpi=120)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
