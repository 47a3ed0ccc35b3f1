"""Where PQN's time goes, and how far it is from this machine's limit.

The workload of `tools/bench_pqn.py --config cartpole` (purejaxql's CartPole config: 32 envs x 64
steps, 4 epochs x 16 minibatches of 128, two LayerNorm layers of 256, RAdam), our `make_train`
compiled as `jit(vmap(train))` even at one seed (`bench_pqn.py` runs one seed unbatched). Each
part's share is measured by ablation, as `tools/bench_ppo_breakdown.py` does for PPO: the same
program is compiled again with that part removed (by replacing, in this process only, the function
that does it), the part's cost is the drop in run time, and every variant runs in interleaved
repeats whose medians are compared. Removing a part can change what the rest computes (without
learning the episodes are shorter), not how much.

  rollout: environment, storage, metrics  the `nosgd` program (no minibatch SGD), minus the two
                                          rows below
  rollout: Q-network and epsilon-greedy   `nosgd` minus the same with a constant action (and
                                          zeros for the Q-values PQN reuses)
  next-state Q pass                       `nosgd` minus the same with the targets' max over
                                          next-state Q-values replaced by zeros (the pass over
                                          every true next observation is then dead code)
  shuffle                                 whole minus the same without the permutation
  SGD forward (loss; the remainder)       whole minus everything else
  SGD backward                            whole minus the same with the loss under
                                          `stop_gradient`
  RAdam + global-norm clipping            whole minus the same with plain SGD

The limit: the dense layers' floating-point operations per update (acting, the next-state pass,
and forward + backward of every minibatch; LayerNorm and the rest left out) over this core's
measured matrix-multiply rate: the time no float32 implementation of this workload can beat here.

    taskset -c 0 uv run --group bench python tools/bench_pqn_breakdown.py [--seeds 1,8]
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_pqn  # noqa: E402
from bench_ppo import compile_timed, run_timed  # noqa: E402
from bench_ppo_breakdown import (  # noqa: E402
    matmul_rate,
    no_sgd,
    no_shuffle,
    patched,
    plain_sgd,
    stack,
)


def variants():
    """name -> context manager that removes one part while a program is traced."""
    import rl_algos.common.sgd as sgd_mod
    import rl_algos.pqn.train as pqn_train

    real_loss, real_rollout = pqn_train.q_loss, pqn_train.rollout

    def no_backward(*a, **k):
        total, metrics = real_loss(*a, **k)
        return jax.lax.stop_gradient(total), metrics

    def const_policy_rollout(venv, policy, *a, **k):
        def policy0(ts, key):  # the extras (the acted Q-values PQN reuses) as zeros
            extras = jax.eval_shape(policy, ts, key)[1]
            zeros = jax.tree.map(lambda x: jnp.zeros(x.shape, x.dtype), extras)
            return jnp.zeros(ts.observation.shape[:1], jnp.int32), zeros
        return real_rollout(venv, policy0, *a, **k)

    def no_next_q(q, mask):
        return jnp.zeros(q.shape[:-1], q.dtype)

    return {
        "whole": contextlib.nullcontext,
        "nosgd": lambda: patched(pqn_train, "sgd_epochs", no_sgd),
        "nosgd_const_policy": lambda: stack(patched(pqn_train, "sgd_epochs", no_sgd),
                                            patched(pqn_train, "rollout", const_policy_rollout)),
        "nosgd_no_next_q": lambda: stack(patched(pqn_train, "sgd_epochs", no_sgd),
                                         patched(pqn_train, "masked_max", no_next_q)),
        "no_shuffle": lambda: patched(sgd_mod, "shuffled_minibatches", no_shuffle),
        "no_backward": lambda: patched(pqn_train, "q_loss", no_backward),
        "plain_sgd": lambda: patched(pqn_train, "annealed_optimizer", plain_sgd),
    }


def dense_flops_per_update() -> float:
    """Multiply-adds x 2 of the dense layers per update and seed (see the module docstring)."""
    _, static, _ = bench_pqn.OURS["cartpole"]
    d_obs, n_act, h = 4, 2, static["hidden_size"]
    net = d_obs * h + h * h + h * n_act
    batch = static["num_envs"] * static["num_steps"]
    fwd = 2 * net
    bwd = 2 * net + 2 * (net - d_obs * h)  # weight gradients, and input gradients but the first
    return batch * fwd * 2 + static["num_epochs"] * batch * (fwd + bwd)  # acting + next pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timesteps", type=int, default=102_400)
    ap.add_argument("--seeds", default="1,8")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    _, static, _ = bench_pqn.OURS["cartpole"]
    per_update = static["num_envs"] * static["num_steps"]
    rate = matmul_rate()
    flops = dense_flops_per_update()
    updates = a.timesteps // per_update
    print(f"jax {jax.__version__}, CartPole-v1, {a.timesteps:,} steps per seed ({updates} "
          f"updates), medians of {a.repeats} interleaved repeats; matmul rate "
          f"{rate / 1e9:.1f} GFLOP/s; dense-layer work {flops / 1e6:.1f} MFLOP per update and "
          f"seed")

    def ours(t, n):
        return bench_pqn.ours("cartpole", t, n, batched=True)

    def theirs(t, n):
        return bench_pqn.purejaxql("cartpole", t, n)

    table = variants()
    for n in [int(s) for s in a.seeds.split(",")]:
        progs = {}
        for name, cm in table.items():
            with cm():  # the patch must be in place while the program is traced
                progs[name] = compile_timed(ours, a.timesteps, n)[:2]
        progs["purejaxql"] = compile_timed(theirs, a.timesteps, n)[:2]
        runs: dict[str, list[float]] = {k: [] for k in progs}
        for _ in range(a.repeats):
            for name, (c, args) in progs.items():
                runs[name].append(run_timed(c, args)[1])
        t = {k: float(np.median(v)) * 1e3 / updates for k, v in runs.items()}  # ms per update
        whole = t["whole"]
        next_q = t["nosgd"] - t["nosgd_no_next_q"]
        policy = t["nosgd"] - t["nosgd_const_policy"]
        shuffle = whole - t["no_shuffle"]
        backward = whole - t["no_backward"]
        optimiser = whole - t["plain_sgd"]
        forward = whole - t["nosgd"] - shuffle - backward - optimiser
        parts = [
            ("rollout: environment, storage, metrics", t["nosgd"] - next_q - policy),
            ("rollout: Q-network and epsilon-greedy", policy),
            ("next-state Q pass (+ Q(lambda) targets)", next_q),
            ("shuffle (4 permutations + gathers)", shuffle),
            ("SGD forward (network + loss; the remainder)", forward),
            ("SGD backward", backward),
            ("RAdam + global-norm clipping", optimiser),
        ]
        limit = n * flops / rate * 1e3
        print(f"\n{n} seed(s): ours {whole:.3f} ms per update (all seeds), purejaxql "
              f"{t['purejaxql']:.3f} ms ({whole / t['purejaxql']:.3f}x); limit "
              f"{limit:.3f} ms (dense layers at the matmul rate): "
              f"{limit / whole * 100:.0f}% of ours")
        print(f"  {'part':44s} {'ms/update':>10} {'share':>7}")
        for name, ms in parts:
            print(f"  {name:44s} {ms:10.3f} {ms / whole * 100:6.1f}%")


if __name__ == "__main__":
    main()
