"""Learning curves of an `rl run` directory: the mean training-episode return of every member
against environment steps (one line each) and their mean, from `metrics.jsonl`.

    uv run python tools/plot_returns.py runs/td3-gymnax_Pendulum-v1-... -o curve.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("-o", "--output", type=Path, required=True)
    ap.add_argument("--title", default=None)
    a = ap.parse_args()
    rows = [json.loads(line) for line in (a.run_dir / "metrics.jsonl").read_text().splitlines()]
    config = json.loads((a.run_dir / "config.json").read_text())
    steps = np.array([r["env_steps"] for r in rows])
    returns = np.array([[np.nan if v is None else v for v in r["episode_return"]] for r in rows])
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=120)
    for i, seed in enumerate(config["seeds"]):
        ax.plot(steps, returns[:, i], lw=0.8, alpha=0.45, label=f"seed {seed}")
    ax.plot(steps, np.nanmean(returns, axis=1), lw=2.2, color="black", label="mean")
    ax.set_xlabel("environment steps per seed")
    ax.set_ylabel("training episode return")
    ax.set_title(a.title or f"{config['algo']} on {config['env']}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, ncol=3, loc="lower right")
    fig.tight_layout()
    fig.savefig(a.output)
    print(f"wrote {a.output}")


if __name__ == "__main__":
    main()
