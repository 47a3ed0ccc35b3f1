"""Learning curves of `rl run` directories: the training episode return (per member, from
metrics.jsonl) against environment steps, one panel per run, written to one PNG.

    uv run python tools/plot_learning.py runs/a runs/b --out docs/figures/pgx-learning.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def curves(run: Path) -> tuple[str, list[int], list[list[float]]]:
    config = json.loads((run / "config.json").read_text())
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    steps = [r["env_steps"] for r in rows]
    per_member = list(zip(*[r["episode_return"] for r in rows], strict=True))
    opponent = (config.get("env_kwargs") or {}).get("opponent", "random")
    title = f"{config['algo']} on {config['env']} (vs {opponent})"
    return title, steps, [list(m) for m in per_member]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    fig, axes = plt.subplots(1, len(args.runs), figsize=(4.2 * len(args.runs), 3.2),
                             squeeze=False)
    for ax, run in zip(axes[0], args.runs, strict=True):
        title, steps, members = curves(run)
        for i, m in enumerate(members):
            ax.plot(steps, m, label=f"member {i}")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("environment steps (agent moves)")
        ax.set_ylabel("training episode return")
        ax.set_ylim(-1.05, 1.05)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
