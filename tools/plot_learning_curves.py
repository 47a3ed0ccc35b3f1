"""Learning curves from `rl run` directories, one panel per run (each member and their mean with
a 95% band over members; `rl_cli.plots` draws them, as `rl run`'s curves.png and `rl plot` do):

    uv run python tools/plot_learning_curves.py runs/ppo-brax_inverted_pendulum-... [...] \
        --out docs/figures/brax-ppo.png [--baseline 6.17 --baseline-label "random legal"]

`rl plot RUN_DIR ... --out FILE` overlays runs on one axes instead.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from rl_cli.plots import plot_panels


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", type=Path, help="rl run directories (one panel each)")
    p.add_argument("--out", "-o", type=Path, required=True, help="PNG to write")
    p.add_argument("--baseline", type=float, default=None, help="a horizontal reference line")
    p.add_argument("--baseline-label", default="baseline")
    p.add_argument("--title", default=None, help="replaces the title (single run only)")
    a = p.parse_args()
    print(f"wrote {plot_panels(a.runs, a.out, a.baseline, a.baseline_label, a.title)}")


if __name__ == "__main__":
    main()
