"""Which half of DPO's objective holds it below PPO? DPO (Lu et al., 2022) differs from PPO only
in its per-sample objective, and that objective has two halves: for a positive advantage
r·A − ReLU((r − 1)·A − α·tanh((r − 1)·A / α)), for a negative one
r·A − ReLU(log(r)·A − β·tanh(log(r)·A / β)). This trains DPO with one half replaced by PPO's
clipped surrogate min(r·A, clip(r, 1 ± ε)·A), everything else DPO's own (`rl run --algo dpo`'s
code path, preset, seeds and greedy evaluation), and prints each variant's greedy and training
returns per seed with their interquartile mean and its 95% bootstrap interval, as
`tools/results.py` reports a row:

    uv run python tools/dpo_halves.py --env gymnax/SpaceInvaders-MinAtar --seeds 4 \
        --total-timesteps 1e7 --set lr=2.5e-3

Variants: `dpo-pos` (DPO's positive half, PPO's clip for negative advantages) and `dpo-neg`
(PPO's clip for positive advantages, DPO's negative half). A variant that ends where PPO does
locates DPO's shortfall in the half it replaced. Each variant is registered for this process
only, under its own name, so its runs cannot be mistaken for DPO's."""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import jax.numpy as jnp
import numpy as np


def half_objective(dpo_half: str):
    """The per-sample objective (to maximise) with DPO's `dpo_half` ('pos' or 'neg') and PPO's
    clipped surrogate for the other sign of the advantage."""
    from rl_algos.dpo.losses import dpo_objective
    from rl_algos.ppo.losses import clipped_surrogate

    def objective(ratio: Any, adv: Any, hp: Any, progress: Any = 0.0) -> Any:
        dpo, ppo = dpo_objective(ratio, adv, hp), clipped_surrogate(ratio, adv, hp)
        positive = adv >= 0.0
        return jnp.where(positive, dpo, ppo) if dpo_half == "pos" else \
            jnp.where(positive, ppo, dpo)

    return objective


def register(dpo_half: str) -> str:
    """Adds the variant to the registry of this process; returns its name."""
    import rl_algos.registry as registry
    from rl_algos.ppo.train import make_algorithm

    name = f"dpo-{dpo_half}"
    registry.ALGORITHMS[name] = dataclasses.replace(
        registry.ALGORITHMS["dpo"], name=name,
        description=f"DPO with PPO's clip for {'negative' if dpo_half == 'pos' else 'positive'} "
                    "advantages",
        make_algorithm=partial(make_algorithm, objective=half_objective(dpo_half)))
    return name


def main() -> None:
    from rl_cli.options import env_kwargs
    from rl_cli.overrides import parse_assignments
    from rl_cli.request import RunRequest
    from rl_cli.runner import execute
    from rl_cli.stats import bootstrap_ci95, iqm

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", required=True)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--total-timesteps", type=float, default=None)
    parser.add_argument("--set", dest="sets", action="append", default=[])
    parser.add_argument("--env-arg", dest="env_args", action="append", default=[])
    parser.add_argument("--variant", action="append", choices=("pos", "neg"))
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--logdir", type=Path, default=None,
                        help="keep the runs here (default: a temporary directory)")
    args = parser.parse_args()
    steps = None if args.total_timesteps is None else int(args.total_timesteps)
    with tempfile.TemporaryDirectory() as tmp:
        logdir = args.logdir or Path(tmp)
        for half in args.variant or ("pos", "neg"):
            name = register(half)
            summary = execute(RunRequest(
                algo=name, env=args.env, num_seeds=args.seeds, total_timesteps=steps,
                sets=parse_assignments(tuple(args.sets)),
                env_kwargs=env_kwargs(tuple(args.env_args)), logdir=logdir, run_name=name,
                progress=False, eval_episodes=args.eval_episodes, checkpoint_minutes=0.0))
            parts = []
            for what, key in (("greedy", "greedy_eval_return_per_member"),
                              ("training", "final_return_per_member")):
                v = np.array([np.nan if x is None else x for x in summary[key]], dtype=float)
                low, high = bootstrap_ci95(v, iqm)
                parts.append(f"{what} per seed {v.round(1).tolist()}, IQM {iqm(v):.1f} "
                             f"[{low:.1f}, {high:.1f}]")
            print(f"{name}: {'; '.join(parts)} ({summary['run_seconds']:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
