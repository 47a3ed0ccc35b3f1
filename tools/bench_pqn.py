"""PQN throughput against purejaxql's PQN (`tools/purejaxql_pqn_repro.py`), in one process.

Both train at purejaxql's own settings: `--config cartpole` is `pqn_cartpole.yaml` (CartPole-v1,
32 envs x 64 steps, 4 epochs x 16 minibatches, two LayerNorm layers of 256, RAdam, lr 1e-4
annealed to 0, epsilon 1 -> 0.2 over the first 20% of updates, lambda 0.95, rewards x 0.1);
`--config minatar` is `pqn_minatar.yaml` (Asterix-MinAtar, 128 envs x 32 steps, 2 epochs x 32
minibatches, a 3x3 convolution of 16 channels then one LayerNorm layer of 128, lr 5e-4 annealed,
epsilon 1 -> 0.05 over the first 10%, lambda 0.65). Ours is `rl_algos.pqn.make_train` with the same
values (its classic_control preset is the cartpole config), its seeds mapped as `rl run` maps them
(`rl_core.members.map_members`: vmapped, except that one seed runs unbatched), not through the
CLI; theirs is the restatement's `jit(vmap(make_train(config)))`, its schedules spread over the run
as ours are (`with_timesteps`). At one seed "ours-vmap" is ours under a vmap of size 1, as theirs
runs: on the CPU a unit batch axis roughly doubles ours' CartPole run time (1.5x on MinAtar):
batched, its LayerNorm reductions and element-wise kernels take slower paths in XLA.

Known differences: ours bootstraps a truncated episode from its true final observation (theirs
merges gymnax's two done flags and cuts it), and values every true next observation in one pass
after a rollout in which an episode was truncated before its last step (otherwise it reuses the
values it acted on, as theirs always does); our convolution pads to keep the 10x10 board (theirs is
unpadded, 8x8: its dense layer is 1.56x smaller) and is computed as a patch contraction (`conv3x3`;
theirs is flax's `lax.conv`); theirs carries an input BatchNorm whose output it discards.

Compile time and run time are measured apart (`jit(...).lower(...).compile()`, then the compiled
call until `block_until_ready`; the process CPU time of the call beside its wall time); the programs
(three at one seed, with ours-vmap) run in interleaved repeats and the ratios are medians of the
paired per-repeat ratios. Returns: the mean return of the training episodes that ended in the last
5% of updates (epsilon-greedy, as both train). The last column counts the HLO operations executed
per update per seed.

    uv run --group bench python tools/bench_pqn.py --config cartpole [--seeds 1,8]
        [--timesteps 200000] [--repeats 3]
    taskset -c 0 uv run --group bench python tools/bench_pqn.py ...   # one core
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

import jax

sys.path.insert(0, str(Path(__file__).resolve().parent))
import purejaxql_pqn_repro as theirs  # noqa: E402
from bench_ppo import (  # noqa: E402
    compile_timed,
    executed_ops,
    interleaved,
    medians,
    paired_ratios,
    seeded,
)

# Ours, per config: (environment id, static settings, traced settings), theirs' values.
OURS = {
    "cartpole": ("gymnax/CartPole-v1",
                 dict(num_envs=32, num_steps=64, num_epochs=4, num_minibatches=16,
                      hidden_size=256, num_layers=2, anneal_lr=True),
                 dict(lr=1e-4, gamma=0.99, q_lambda=0.95, eps_start=1.0, eps_finish=0.2,
                      eps_decay=0.2, max_grad_norm=10.0, reward_scale=0.1)),
    "minatar": ("gymnax/Asterix-MinAtar",
                dict(num_envs=128, num_steps=32, num_epochs=2, num_minibatches=32,
                     hidden_size=128, num_layers=1, cnn_channels=16, anneal_lr=True),
                dict(lr=5e-4, gamma=0.99, q_lambda=0.65, eps_start=1.0, eps_finish=0.05,
                     eps_decay=0.1, max_grad_norm=10.0, reward_scale=1.0)),
}


def ours(config: str, timesteps: int, n: int, batched: bool = False):
    import rl_envs
    from rl_algos import pqn
    from rl_algos.common import hparams_as_arrays
    env_id, static, traced = OURS[config]
    train = pqn.make_train(rl_envs.make(env_id),
                           pqn.PQNConfig(total_timesteps=timesteps, **static))
    return seeded(train, hparams_as_arrays(pqn.PQNHParams(**traced)), n, batched)


def purejaxql(config: str, timesteps: int, n: int):
    cfg = theirs.with_timesteps(theirs.CONFIGS[config], timesteps)
    fn = jax.jit(jax.vmap(theirs.make_train(cfg)))
    return fn, (jax.random.split(jax.random.PRNGKey(0), n),), theirs.final_return


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", choices=sorted(OURS), default="cartpole")
    ap.add_argument("--timesteps", type=int, default=200_000)
    ap.add_argument("--seeds", default="1,8")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    static = OURS[a.config][1]
    per_update = static["num_envs"] * static["num_steps"]
    print(f"jax {jax.__version__}, {jax.devices()[0].device_kind}, {a.config} "
          f"({OURS[a.config][0]}), {a.timesteps:,} steps per seed; run times are medians over "
          f"{a.repeats} interleaved repeats (ours, [ours-vmap at one seed,] purejaxql, ours, ...)")
    print(f"{'seeds':>5} {'impl':>9} {'compile s':>10} {'run s':>8} {'cpu s':>8} "
          f"{'steps/s':>12} {'return':>7} {'ops/update':>11}")
    for n in [int(s) for s in a.seeds.split(",")]:
        # At one seed, also ours under a vmap of size 1 (as purejaxql runs it), to show what
        # running a single seed unbatched is worth.
        impls = {"ours": ours, **({"ours-vmap": partial(ours, batched=True)} if n == 1 else {}),
                 "purejaxql": purejaxql}
        progs = {name: compile_timed(lambda t, k, m=make: m(a.config, t, k), a.timesteps, n)
                 for name, make in impls.items()}
        outs, runs = interleaved(progs, a.repeats)
        res = {}
        for name, (compiled, _, final_return, compile_s) in progs.items():
            ops = executed_ops(compiled.as_text()) / n / (a.timesteps // per_update)
            res[name] = medians(compile_s, runs[name])
            wall, cpu = res[name]["run"], res[name]["cpu"]
            print(f"{n:>5} {name:>9} {compile_s:>10.2f} {wall:>8.2f} {cpu:>8.2f} "
                  f"{n * a.timesteps / wall:>12,.0f} {final_return(outs[name]):>7.1f} "
                  f"{ops:>11,.0f}", flush=True)
        for us in (name for name in impls if name != "purejaxql"):
            print(paired_ratios(n, us, "purejaxql", runs, res), flush=True)


if __name__ == "__main__":
    main()
