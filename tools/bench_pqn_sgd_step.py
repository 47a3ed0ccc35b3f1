"""PQN's minibatch step alone, with and without a seed axis, in three arrangements.

The step of `tools/bench_pqn.py --config cartpole` (a minibatch of 128 CartPole observations, two
LayerNorm layers of 256, the Q(lambda) regression loss, global-norm clipping then RAdam), as a
`lax.scan` of 64 steps, timed under `jit` and under `jit(vmap(...))` over a seed axis of size 1
(the way purejaxql's script runs one seed, and PQN many), microseconds per step:

  ours         `rl_algos.common.qnetwork.QNetwork`, each sample through `eqx.nn.Linear` (`W @ x`)
               and vmapped over the batch, as PQN computes it, with `optax.flatten`
  purejaxql    the restatement's flax `QNetwork` (`tools/purejaxql_pqn_repro.py`), plain optax
  batch-major  ours with every layer computed on the whole batch (`x @ W.T`): the same
               function, rounded differently (its largest difference from ours is printed)

The last column counts `copy` instructions in the optimised HLO: under the seed axis, the
per-sample arrangement's products come out `[out, B]` and are copied back to `[B, out]`.

    taskset -c 0 uv run --group bench python tools/bench_pqn_sgd_step.py
"""

from __future__ import annotations

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


def data():
    k1, k2, k3 = jax.random.split(jax.random.PRNGKey(1), 3)
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


def sgd(loss, tx, batches):
    def run(params):
        def step(carry, mb):
            p, s = carry
            updates, s = tx.update(jax.grad(loss)(p, *mb), s, p)
            return (optax.apply_updates(p, updates), s), None

        return jax.lax.scan(step, (params, tx.init(params)), batches)[0][0]

    return run


def per_step_us(fn, params, repeats: int = 20) -> float:
    jax.block_until_ready(fn(params))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(params))
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) / STEPS * 1e6


def main() -> None:
    batches = data()
    table = arrangements()
    print(f"jax {jax.__version__}: {STEPS} steps of a [{BATCH}, 4] minibatch, layers of {HIDDEN}; "
          "us per step (median of 20 calls)")
    print(f"{'arrangement':>12} {'jit':>8} {'vmap(1)':>8} {'copies jit':>11} {'copies vmap':>12}")
    for name, (loss, params, tx) in table.items():
        run = sgd(loss, tx, batches)
        seeded = jax.tree.map(lambda x: x[None], params)
        jitted, vmapped = jax.jit(run), jax.jit(jax.vmap(run))
        copies = [c.lower(p).compile().as_text().count(" copy(")
                  for c, p in ((jitted, params), (vmapped, seeded))]
        print(f"{name:>12} {per_step_us(jitted, params):8.0f} {per_step_us(vmapped, seeded):8.0f} "
              f"{copies[0]:>11} {copies[1]:>12}", flush=True)
    ours, bm = table["ours"][0], table["batch-major"][0]
    mb = jax.tree.map(lambda x: x[0], batches)
    g1, g2 = (jax.jit(jax.grad(f))(table["ours"][1], *mb) for f in (ours, bm))
    diff = max(float(jnp.max(jnp.abs(a - b)))
               for a, b in zip(jax.tree.leaves(g1), jax.tree.leaves(g2), strict=True))
    print(f"batch-major's largest gradient difference from ours: {diff:.2e}")


if __name__ == "__main__":
    main()
