"""PQN's minibatch step alone, with and without a seed axis, in three arrangements.

The step of `tools/bench_pqn.py --config cartpole` (a minibatch of 128 CartPole observations, two
LayerNorm layers of 256, the Q(lambda) regression loss, global-norm clipping then RAdam), as a
`lax.scan` of 64 steps, timed under `jit`, under `jit(vmap(...))` over a seed axis of size 1
(the way purejaxql's script runs one seed), and over 8 seeds, each with its own minibatches (its
parameters are copies: the values do not change the time), as PQN and purejaxql train 8 seeds;
microseconds per step, all the seeds together:

  ours         `rl_algos.common.qnetwork.QNetwork`, each sample through `eqx.nn.Linear` (`W @ x`)
               and vmapped over the batch, as PQN computes it, with `optax.flatten`
  purejaxql    the restatement's flax `QNetwork` (`tools/purejaxql_pqn_repro.py`), plain optax
  batch-major  ours with every layer computed on the whole batch (`x @ W.T`): the same
               function, rounded differently (its largest difference from ours is printed)

The programs of one column run in interleaved calls (ours, purejaxql, batch-major, ours, ...) and
each figure is the median of its calls: the speed of this machine drifts within a process, and
interleaving shares the drift. The last columns count `copy` instructions in the optimised HLO:
under the seed axis, the per-sample arrangement's products come out `[out, B]` and are copied
back to `[B, out]`.

    taskset -c 0 uv run --group bench python tools/bench_pqn_sgd_step.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

sys.path.insert(0, str(Path(__file__).resolve().parent))
import purejaxql_pqn_repro as theirs  # noqa: E402

from rl_algos.common.qnetwork import QNetwork  # noqa: E402

BATCH, STEPS, HIDDEN = 128, 64, 256


def data(seed: int = 1):
    """64 minibatches: observations `[64, 128, 4]`, actions and targets `[64, 128]`."""
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(seed), 3)
    return (jax.random.normal(k1, (STEPS, BATCH, 4)),
            jax.random.randint(k2, (STEPS, BATCH), 0, 2),
            jax.random.normal(k3, (STEPS, BATCH)))


def regression(q, action, target):
    q_taken = jnp.take_along_axis(q, action[:, None], axis=-1)[:, 0]
    return 0.5 * jnp.mean((q_taken - target) ** 2)


def arrangements():
    """name -> (loss(params, obs, action, target), params, optimiser)."""
    model = QNetwork(jax.random.PRNGKey(0), obs_shape=(4,), num_actions=2, hidden_size=HIDDEN,
                     num_layers=2, cnn_channels=0)
    params, static = eqx.partition(model, eqx.is_array)

    def ours(p, obs, action, target):
        return regression(jax.vmap(eqx.combine(p, static))(obs), action, target)

    def batch_major(p, obs, action, target):
        m = eqx.combine(p, static)
        x = obs
        for layer, norm in zip(m.layers, m.norms, strict=True):
            x = x @ layer.weight.T + layer.bias
            mean, var = jnp.mean(x, -1, keepdims=True), jnp.var(x, -1, keepdims=True)
            x = jax.nn.relu((x - mean) * jax.lax.rsqrt(var + norm.eps) * norm.weight + norm.bias)
        return regression(x @ m.head.weight.T + m.head.bias, action, target)

    net = theirs.QNetwork(action_dim=2, hidden_size=HIDDEN, num_layers=2,
                          norm_type="layer_norm", norm_input=False)
    variables = net.init(jax.random.PRNGKey(0), jnp.zeros((BATCH, 4)), train=False)

    def flax(p, obs, action, target):
        q, _ = net.apply({"params": p, "batch_stats": variables["batch_stats"]}, obs,
                         train=True, mutable=["batch_stats"])
        return regression(q, action, target)

    plain = optax.chain(optax.clip_by_global_norm(10.0), optax.radam(1e-4))
    return {"ours": (ours, params, optax.flatten(plain)),
            "purejaxql": (flax, variables["params"], plain),
            "batch-major": (batch_major, params, optax.flatten(plain))}


def sgd(loss, tx):
    """`(params, batches) -> params` after one optimiser step per minibatch of `batches`."""
    def run(params, batches):
        def step(carry, mb):
            p, s = carry
            updates, s = tx.update(jax.grad(loss)(p, *mb), s, p)
            return (optax.apply_updates(p, updates), s), None

        return jax.lax.scan(step, (params, tx.init(params)), batches)[0][0]

    return run


def interleaved_us(calls: dict[str, tuple], repeats: int) -> dict[str, float]:
    """Median microseconds per step of each compiled `(fn, args)`, called in turn."""
    for fn, args in calls.values():
        jax.block_until_ready(fn(*args))
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeats):
        for name, (fn, args) in calls.items():
            t0 = time.perf_counter()
            jax.block_until_ready(fn(*args))
            times[name].append(time.perf_counter() - t0)
    return {name: float(np.median(t)) / STEPS * 1e6 for name, t in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=15)
    a = ap.parse_args()
    batches = data()
    eight = jax.tree.map(lambda *x: jnp.stack(x), *(data(1 + s) for s in range(8)))
    table = arrangements()
    stacked = {name: jax.tree.map(lambda x: jnp.stack([x] * 8), params)
               for name, (_, params, _) in table.items()}
    single = {name: jax.tree.map(lambda x: x[None], params)
              for name, (_, params, _) in table.items()}
    columns: dict[str, dict[str, tuple]] = {"jit": {}, "vmap(1)": {}, "vmap(8)": {}}
    copies = {}
    for name, (loss, params, tx) in table.items():
        run = sgd(loss, tx)
        one = (single[name], jax.tree.map(lambda x: x[None], batches))
        jitted = jax.jit(run).lower(params, batches).compile()
        vmapped = jax.jit(jax.vmap(run)).lower(*one).compile()
        columns["jit"][name] = (jitted, (params, batches))
        columns["vmap(1)"][name] = (vmapped, one)
        columns["vmap(8)"][name] = (jax.jit(jax.vmap(run)).lower(stacked[name], eight)
                                    .compile(), (stacked[name], eight))
        copies[name] = [c.as_text().count(" copy(") for c in (jitted, vmapped)]
    us = {col: interleaved_us(calls, a.repeats) for col, calls in columns.items()}
    print(f"jax {jax.__version__}: {STEPS} steps of a [{BATCH}, 4] minibatch, layers of {HIDDEN}; "
          f"us per step, all seeds together (median of {a.repeats} interleaved calls)")
    print(f"{'arrangement':>12} {'jit':>8} {'vmap(1)':>8} {'vmap(8)':>8} {'copies jit':>11} "
          f"{'copies vmap':>12}")
    for name in table:
        print(f"{name:>12} {us['jit'][name]:8.0f} {us['vmap(1)'][name]:8.0f} "
              f"{us['vmap(8)'][name]:8.0f} {copies[name][0]:>11} {copies[name][1]:>12}",
              flush=True)
    ours, bm = table["ours"][0], table["batch-major"][0]
    mb = jax.tree.map(lambda x: x[0], batches)
    g1, g2 = (jax.jit(jax.grad(f))(table["ours"][1], *mb) for f in (ours, bm))
    diff = max(float(jnp.max(jnp.abs(a - b)))
               for a, b in zip(jax.tree.leaves(g1), jax.tree.leaves(g2), strict=True))
    print(f"batch-major's largest gradient difference from ours: {diff:.2e}")


if __name__ == "__main__":
    main()
