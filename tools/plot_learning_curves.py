"""Learning curves from `rl run` directories: the mean return of the episodes that ended in each
logged chunk, one line per member, one panel per run directory.

    uv run python tools/plot_learning_curves.py runs/ppo-brax_inverted_pendulum-... [...] \
        --out docs/figures/brax-ppo.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(run_dir: Path) -> tuple[dict, list[dict]]:
    config = json.loads((run_dir / "config.json").read_text())
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return config, rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args()
    fig, axes = plt.subplots(1, len(a.runs), figsize=(5 * len(a.runs), 3.6), squeeze=False)
    for ax, run in zip(axes[0], a.runs, strict=True):
        config, rows = load(run)
        steps = [r["env_steps"] for r in rows]
        members = len(rows[0]["episode_return"])
        for m in range(members):  # chunks in which no episode ended have no point
            pts = [(x, r["episode_return"][m]) for x, r in zip(steps, rows, strict=True)
                   if r["episode_return"][m] is not None]
            ax.plot([x for x, _ in pts], [y for _, y in pts], lw=1, alpha=0.8,
                    marker="o" if len(pts) < 20 else None, ms=3, label=f"seed {m}")
        summary_path = run / "summary.json"
        title = f"{config.get('algo', '')} on {config.get('env', run.name)}"
        if summary_path.exists():
            s = json.loads(summary_path.read_text())
            if s.get("final_return_mean") is not None:
                title += f"\nfinal mean {s['final_return_mean']:.1f}"
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("environment steps per seed")
        ax.ticklabel_format(axis="x", style="sci", scilimits=(0, 0))
        ax.set_ylabel("episode return")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(a.out, dpi=110)
    print(a.out)


if __name__ == "__main__":
    main()
