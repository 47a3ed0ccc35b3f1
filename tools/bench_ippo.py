"""IPPO throughput against JaxMARL's IPPO (`tools/jaxmarl_ippo_repro.py`), in one process.

Both train MPE_simple_spread_v3 (3 agents, JaxMARL 0.2's environment) at JaxMARL's own settings,
`baselines/IPPO/config/ippo_ff_mpe.yaml`: 16 envs x 128 steps, 4 epochs x 4 minibatches, one
actor-critic of two tanh MLPs of 64-64 shared by every agent, lr 2.5e-4 annealed, gamma 0.99,
lambda 0.95, clip 0.2, entropy 0.01, value 0.5, grad-norm 0.5; both for `--timesteps`
environment steps per seed (default 1e6; the yaml's run is 1e7), an update consuming
16 x 128 of them (x 3 agents' transitions). Ours is the registry's IPPO with its `mpe` preset
(`rl_algos.get("ippo")`, `rl_core.make_train(spec.make_algorithm(env, config))` over
`rl_envs.make("jaxmarl/MPE_simple_spread_v3")`), its seeds mapped as `rl run` maps them
(`rl_core.members.map_members`: vmapped, except that one seed runs unbatched), not through the
CLI; at one seed "ours-vmap" is ours under a vmap of size 1, as theirs runs one seed. Theirs is
the restatement's `jit(vmap(make_train(config)))`, its orthogonal initialisers drawn one seed at a
time as ours are (SEQ_ORTHOGONAL; otherwise jax 0.10.2 can deadlock on CPU under vmap, see
docs/stress-many-seeds.md).

Known difference, costing ours work, not saving it: MPE episodes end by their time limit only, and
ours bootstraps each such truncation from the value of its true final observation (theirs treats
it as a terminal state), so ours also values every true next observation after the rollout.

Compile time and run time are measured apart (`jit(...).lower(...).compile()`, then the compiled
call until `block_until_ready`; the process CPU time of the call beside its wall time); the
programs (at one seed each arrangement also as ours-vmap) run in interleaved repeats and the ratio
ours/theirs is the median of the paired per-repeat ratios of run time. Returns: the mean team
return (the sum of the agents' returns; JaxMARL's `returned_episode_returns`, which `MPELogWrapper`
scales by the number of agents) of the training episodes that ended in the last 5% of updates, per
seed, averaged over seeds. The last column counts the HLO operations executed per update per seed
(`executed_ops`).

    uv run --group bench python tools/bench_ippo.py --seeds 1,8 [--timesteps 1000000]
        [--repeats 3] [--arrangements preset,fast]
    taskset -c 0 uv run --group bench python tools/bench_ippo.py --seeds 1,8   # one core
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import jaxmarl_ippo_repro as theirs  # noqa: E402
from bench_ppo import (  # noqa: E402
    compile_timed,
    executed_ops,
    interleaved,
    medians,
    paired_ratios,
    seeded,
)

ENV_ID = "jaxmarl/MPE_simple_spread_v3"
PRESET = "mpe"


def ours(timesteps: int, n: int, fast_update: bool = False, batched: bool = False,
         ) -> tuple[Any, tuple, Callable[[Any], float]]:
    """Our IPPO at its `mpe` preset (JaxMARL's yaml), `timesteps` environment steps per seed;
    `fast_update`: PPO's same update in its faster arrangement (`--set fast_update=true`);
    `batched`: under `jit(vmap(train))` even at one seed."""
    import rl_algos
    import rl_core
    import rl_envs
    from rl_algos.common import hparams_as_arrays

    spec = rl_algos.get("ippo")
    preset = spec.presets[PRESET]
    config = spec.config_cls(**{**preset.config, "total_timesteps": timesteps,
                                "fast_update": fast_update})
    hp = hparams_as_arrays(spec.hparams_cls(**preset.hparams))
    train = rl_core.make_train(spec.make_algorithm(rl_envs.make(ENV_ID), config))
    return seeded(train, hp, n, batched)


def jaxmarl(timesteps: int, n: int) -> tuple[Any, tuple, Callable[[Any], float]]:
    """The restatement of JaxMARL's ippo_ff_mpe.py at its yaml's settings."""
    cfg = theirs.with_timesteps(dict(theirs.CONFIG, SEQ_ORTHOGONAL=True), timesteps)
    fn = jax.jit(jax.vmap(theirs.make_train(cfg)))
    return fn, (jax.random.split(jax.random.PRNGKey(0), n),), theirs.final_return


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timesteps", type=int, default=1_000_000,
                    help="environment steps per seed")
    ap.add_argument("--seeds", default="1,8")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--arrangements", default="preset",
                    help="ours as the preset runs it (`preset`, program `ours`) and/or with "
                         "fast_update=true (`fast`, program `ours-fast`: PPO's faster arrangement "
                         "of the same update), comma-separated; each is interleaved with the rest")
    a = ap.parse_args()
    arrangements = {"preset": ("ours", False), "fast": ("ours-fast", True)}
    chosen = a.arrangements.split(",")
    if not chosen or any(c not in arrangements for c in chosen):
        ap.error(f"--arrangements takes a comma-separated list of {', '.join(arrangements)}; "
                 f"got '{a.arrangements}'")
    per_update = theirs.CONFIG["NUM_ENVS"] * theirs.CONFIG["NUM_STEPS"]
    updates = a.timesteps // per_update
    if updates < 1:
        ap.error(f"--timesteps must be at least one update ({per_update} environment steps)")
    steps = updates * per_update  # environment steps per seed that both run
    print(f"jax {jax.__version__}, {jax.devices()[0].device_kind}, MPE_simple_spread_v3, "
          f"{steps:,} environment steps per seed ({updates} updates); run times are medians "
          f"over {a.repeats} interleaved repeats (ours, [ours-vmap at one seed,] jaxmarl, ours, "
          f"...); ours-fast: ours with fast_update=true")
    print(f"{'seeds':>5} {'program':>14} {'compile s':>10} {'run s':>8} {'cpu s':>8} "
          f"{'steps/s':>12} {'ours/theirs':>11} {'team return':>11} {'ops/update':>11}")
    for n in [int(s) for s in a.seeds.split(",")]:
        # At one seed, also ours under a vmap of size 1 (as theirs runs it), to show what
        # running a single seed unbatched is worth.
        impls: dict[str, Callable] = {}
        for name, fast in (arrangements[c] for c in chosen):
            impls[name] = partial(ours, fast_update=fast)
            if n == 1:
                impls[f"{name}-vmap"] = partial(ours, fast_update=fast, batched=True)
        impls["jaxmarl"] = jaxmarl
        progs = {name: compile_timed(make, a.timesteps, n) for name, make in impls.items()}
        outs, runs = interleaved(progs, a.repeats)
        ratio = {"jaxmarl": "1"}
        for name in (name for name in impls if name != "jaxmarl"):
            paired = [o[0] / r[0] for o, r in zip(runs[name], runs["jaxmarl"], strict=True)]
            ratio[name] = f"{float(np.median(paired)):.3f}x"
        res = {}
        for name, (compiled, _, final_return, compile_s) in progs.items():
            ops = executed_ops(compiled.as_text()) / n / updates
            res[name] = medians(compile_s, runs[name])
            wall, cpu = res[name]["run"], res[name]["cpu"]
            print(f"{n:>5} {name:>14} {compile_s:>10.2f} {wall:>8.2f} {cpu:>8.2f} "
                  f"{n * steps / wall:>12,.0f} {ratio[name]:>11} "
                  f"{final_return(outs[name]):>11.2f} {ops:>11,.0f}", flush=True)
        for us in (name for name in impls if name != "jaxmarl"):
            print(paired_ratios(n, us, "jaxmarl", runs, res), flush=True)


if __name__ == "__main__":
    main()
