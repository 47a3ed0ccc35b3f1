"""Where PPO's time goes, and how far it is from this machine's limit.

The workload of `tools/bench_ppo.py` (PureJaxRL's CartPole config: 4 envs x 128 steps, 4 epochs x 4
minibatches of 128, two tanh layers of 64 for actor and critic), our `make_train` compiled as
`jit(vmap(train))`, and the PureJaxRL-style peer likewise, even at one seed. Each part's share is
measured by ablation: the same program is compiled again with that part removed (by replacing, in
this process only, the function that does it), and the part's cost is the drop in run time; every
variant runs in interleaved repeats and the medians are compared. Removing a part can change what
the rest computes (without learning the episodes are shorter), not how much: every part here costs
the same whatever the values.

  rollout: environment, policy, storage   the `nosgd` program (no minibatch SGD at all), minus
                                          the next-value pass and GAE
  policy network in the rollout           `nosgd` minus the same with a constant action
  reset randomness in the rollout         the whole program minus the same with a fixed reset key
                                          (one threefry loop per rollout step, from the
                                          environment's reset inside `AutoReset`)
  next-value pass + GAE                   `nosgd` minus the same with next values = values
  shuffle                                 whole minus the same without the permutation
  SGD forward (loss)                      the SGD's remainder after the three below
  SGD backward                            whole minus the same with the loss under
                                          `stop_gradient` (no backward pass)
  Adam + global-norm clipping             whole minus the same with plain SGD

The limit: the dense layers' floating-point operations per update (rollout, next values, and
forward + backward of every minibatch; the elementwise work left out) over this core's measured
matrix-multiply rate (a 1024 x 1024 float32 product): the time no float32 implementation of this
workload can beat on this machine.

    taskset -c 0 uv run --group bench python tools/bench_ppo_breakdown.py [--seeds 1,16]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_ppo  # noqa: E402


@contextlib.contextmanager
def patched(obj, name, value):
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, old)


def stack(*cms):
    """The context managers `cms` entered together."""
    st = contextlib.ExitStack()
    for cm in cms:
        st.enter_context(cm)
    return st


def no_sgd(grad_fn, tx, params, opt_state, batch, *a, **k):
    """`sgd_epochs` without the SGD: the batch kept alive (a checksum), so that nothing before
    the SGD is dropped."""
    total = sum(jnp.sum(x.astype(jnp.float32)) for x in jax.tree.leaves(batch))
    return params, opt_state, {"checksum": total}


def plain_sgd(config, kind="adam", steps_per_update=None):
    """`annealed_optimizer` replaced by plain SGD (no clipping, no Adam/RAdam state)."""
    import optax

    return lambda hp: optax.sgd(1e-9)


def no_shuffle(key, batch, m):
    """`shuffled_minibatches` without the permutation: the batch cut in order."""
    return jax.tree.map(lambda x: x.reshape(m, x.shape[0] // m, *x.shape[1:]), batch)


def variants():
    """name -> context manager that removes one part while a program is traced."""
    import rl_algos.common.sgd as sgd_mod
    import rl_algos.ppo.train as ppo_train
    from rl_core import wrappers

    real_loss, real_rollout, real_gae = ppo_train.ppo_loss, ppo_train.rollout, ppo_train.gae

    def no_backward(*a, **k):
        total, metrics = real_loss(*a, **k)
        return jax.lax.stop_gradient(total), metrics

    def const_policy_rollout(venv, policy, *a, **k):
        def policy0(ts, x):
            n = ts.observation.shape[0]
            zeros = jnp.zeros((n,), jnp.float32)
            return jnp.zeros((n,), jnp.int32), {"log_prob": zeros, "value": zeros}
        return real_rollout(venv, policy0, *a, **k)

    def no_next_values(rewards, values, next_values, *a):
        return real_gae(rewards, values, values, *a)

    real_step = wrappers.AutoReset.step

    def fixed_reset_key(self, state, action, key):
        if wrappers.key_batch_ndim(key):
            key = jnp.stack([key[0], jax.random.PRNGKey(0)])
        return real_step(self, state, action, key)

    return {
        "whole": contextlib.nullcontext,
        "nosgd": lambda: patched(ppo_train, "sgd_epochs", no_sgd),
        "nosgd_const_policy": lambda: stack(patched(ppo_train, "sgd_epochs", no_sgd),
                                            patched(ppo_train, "rollout", const_policy_rollout)),
        "nosgd_no_next_values": lambda: stack(patched(ppo_train, "sgd_epochs", no_sgd),
                                              patched(ppo_train, "gae", no_next_values)),
        "fixed_reset_key": lambda: patched(wrappers.AutoReset, "step", fixed_reset_key),
        "no_shuffle": lambda: patched(sgd_mod, "shuffled_minibatches", no_shuffle),
        "no_backward": lambda: patched(ppo_train, "ppo_loss", no_backward),
        "plain_sgd": lambda: patched(ppo_train, "annealed_optimizer", plain_sgd),
    }


def dense_flops_per_update() -> float:
    """Multiply-adds x 2 of the dense layers per update and seed (see the module docstring)."""
    hp = bench_ppo.HP
    d_obs, n_act, h = 4, 2, 64
    actor = d_obs * h + h * h + h * n_act
    critic = d_obs * h + h * h + h
    batch = hp["num_envs"] * hp["num_steps"]
    fwd = 2 * (actor + critic)
    # Backward: the weight gradients (as many as the forward) and the input gradients of every
    # layer but the first.
    bwd = 2 * (actor + critic) + 2 * (actor + critic - 2 * d_obs * h)
    rollout = batch * fwd
    next_values = batch * 2 * critic
    sgd = hp["num_epochs"] * batch * (fwd + bwd)
    return rollout + next_values + sgd


def matmul_rate() -> float:
    a = jnp.ones((1024, 1024), jnp.float32)
    f = jax.jit(lambda x: x @ x)
    jax.block_until_ready(f(a))
    best = min(bench_ppo.run_timed(f, (a,))[1] for _ in range(7))
    return 2 * 1024**3 / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timesteps", type=int, default=131_072)
    ap.add_argument("--seeds", default="1,16")
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    rate = matmul_rate()
    flops = dense_flops_per_update()
    updates = a.timesteps // 512
    print(f"jax {jax.__version__}, CartPole-v1, {a.timesteps:,} steps per seed ({updates} "
          f"updates), medians of {a.repeats} interleaved repeats; matmul rate "
          f"{rate / 1e9:.1f} GFLOP/s; dense-layer work {flops / 1e6:.1f} MFLOP per update and "
          f"seed")
    table = variants()
    # Both programs under `jit(vmap(...))` even at one seed (the arrangement the breakdown's
    # documented figures were measured in; `bench_ppo.py` runs one seed unbatched).
    batched_ours = functools.partial(bench_ppo.ours, batched=True)
    batched_purejaxrl = functools.partial(bench_ppo.purejaxrl_ppo, batched=True)
    for n in [int(s) for s in a.seeds.split(",")]:
        progs = {}
        for name, cm in table.items():
            with cm():  # the patch must be in place while the program is traced
                progs[name] = bench_ppo.compile_timed(batched_ours, a.timesteps, n)[:2]
        progs["purejaxrl"] = bench_ppo.compile_timed(batched_purejaxrl, a.timesteps, n)[:2]
        runs: dict[str, list[float]] = {k: [] for k in progs}
        for _ in range(a.repeats):
            for name, (c, args) in progs.items():
                runs[name].append(bench_ppo.run_timed(c, args)[1])
        t = {k: float(np.median(v)) * 1e3 / updates for k, v in runs.items()}  # ms per update
        whole = t["whole"]
        rollout_all = t["nosgd"]
        gae_nv = t["nosgd"] - t["nosgd_no_next_values"]
        policy = t["nosgd"] - t["nosgd_const_policy"]
        resets = whole - t["fixed_reset_key"]
        shuffle = whole - t["no_shuffle"]
        backward = whole - t["no_backward"]
        optimiser = whole - t["plain_sgd"]
        forward = whole - rollout_all - shuffle - backward - optimiser
        parts = [
            ("rollout: environment, storage, metrics", rollout_all - gae_nv - policy - resets),
            ("rollout: reset randomness (threefry loop)", resets),
            ("rollout: policy network and sampling", policy),
            ("next-value pass + GAE", gae_nv),
            ("shuffle (4 permutations + gathers)", shuffle),
            ("SGD forward (network + loss; the remainder)", forward),
            ("SGD backward", backward),
            ("Adam + global-norm clipping", optimiser),
        ]
        limit = n * flops / rate * 1e3
        print(f"\n{n} seed(s): ours {whole:.3f} ms per update (all seeds), PureJaxRL-style "
              f"{t['purejaxrl']:.3f} ms ({whole / t['purejaxrl']:.3f}x); limit "
              f"{limit:.3f} ms (dense layers at the matmul rate): "
              f"{limit / whole * 100:.0f}% of ours")
        print(f"  {'part':44s} {'ms/update':>10} {'share':>7}")
        for name, ms in parts:
            print(f"  {name:44s} {ms:10.3f} {ms / whole * 100:6.1f}%")


if __name__ == "__main__":
    main()
