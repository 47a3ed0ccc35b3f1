"""Batch-first dense networks for the off-policy continuous-control methods (TD3, SAC): a stack of
dense layers, twin Q-critics whose parameters are stacked along a leading axis, and their loss.
Layers use Equinox's default initialisation (uniform in ±1/sqrt(fan_in), that of TD3's PyTorch
code).

Why batch-first modules and a hand-written `dense` instead of `jax.vmap(eqx.nn.Linear)`: the
learning step of these methods is a chain of small matmuls (batch 256, width 64) and on the CPU
it is bound by how fast each one runs. Two shapes fall off XLA CPU's fast matmul path: the weight
gradient autodiff emits (a dot contracting both operands' leading, batch axis) and the batched dot
that `vmap` over stacked critics makes. `dense` computes the weight gradient from a materialised
transpose instead, and `TwinCritic` runs its critics one after the other; on the 2-core CPU this
takes TD3's learning arithmetic from 3.0 to 1.9 s per 1e4 steps (`tools/bench_td3.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.networks import ACTIVATIONS


@jax.custom_vjp
def dense(x: jax.Array, weight: jax.Array, bias: jax.Array) -> jax.Array:
    """`x [B, d_in] @ weight[d_out, d_in].T + bias [d_out] -> [B, d_out]`."""
    return x @ weight.T + bias


def _dense_fwd(x: jax.Array, weight: jax.Array, bias: jax.Array):
    return dense(x, weight, bias), (x, weight)


def _dense_bwd(residuals: tuple[jax.Array, jax.Array], g: jax.Array):
    """`dx = g @ W`, `dW = g.T @ x`, `db = sum_b g`. On the CPU `g.T` is materialised behind an
    optimisation barrier, so the algebraic simplifier cannot fold it back into a dot that
    contracts both leading axes (1.5x slower at width 64, 3x at width 4); elsewhere the
    transpose is left to the dot. The choice is made when the program is lowered for its
    device (`lax.platform_dependent`), not from the default backend at trace time."""
    x, weight = residuals
    g_t = jax.lax.platform_dependent(
        g, cpu=lambda g: jax.lax.optimization_barrier(g.T), default=lambda g: g.T)
    return g @ weight, g_t @ x, jnp.sum(g, axis=0)


dense.defvjp(_dense_fwd, _dense_bwd)


class DenseStack(eqx.Module):
    """`x [B, d_in] -> [B, d_out]`: hidden layers with an activation, then a linear output
    layer."""

    layers: list[eqx.nn.Linear]
    activation: str = eqx.field(static=True)

    def __init__(self, key: jax.Array, d_in: int, hidden: Sequence[int], d_out: int,
                 activation: str):
        sizes = [d_in, *hidden, d_out]
        keys = jax.random.split(key, len(sizes) - 1)
        self.layers = [eqx.nn.Linear(a, b, key=k)
                       for k, a, b in zip(keys, sizes[:-1], sizes[1:], strict=True)]
        self.activation = activation

    def __call__(self, x: jax.Array) -> jax.Array:
        act = ACTIVATIONS[self.activation]
        for layer in self.layers[:-1]:
            x = act(dense(x, layer.weight, layer.bias))
        last = self.layers[-1]
        return dense(x, last.weight, last.bias)


class TwinCritic(eqx.Module):
    """`(observations [B, D], actions [B, A]) -> [B, num_critics]` Q-values of independently
    initialised critics, their parameters stacked along a leading axis (`nets`' leaves are
    `[num_critics, ...]`)."""

    nets: DenseStack

    def __init__(self, key: jax.Array, d_obs: int, d_action: int, hidden: Sequence[int],
                 activation: str, num_critics: int = 2):
        def one(k: jax.Array) -> DenseStack:
            return DenseStack(k, d_obs + d_action, hidden, 1, activation)

        self.nets = eqx.filter_vmap(one)(jax.random.split(key, num_critics))

    @property
    def num_critics(self) -> int:
        return self.nets.layers[0].weight.shape[0]

    def q(self, k: int, obs: jax.Array, action: jax.Array) -> jax.Array:
        """Critic `k` alone: `[B]` (the actor's loss needs only the first)."""
        net = jax.tree.map(lambda leaf: leaf[k], self.nets)
        return net(jnp.concatenate([obs, action], axis=-1))[:, 0]

    def __call__(self, obs: jax.Array, action: jax.Array) -> jax.Array:
        return jnp.stack([self.q(k, obs, action) for k in range(self.num_critics)], axis=-1)


def critic_loss(q: jax.Array, target: jax.Array) -> tuple[jax.Array, dict[str, jax.Array]]:
    """Sum over the critics of the mean squared error to the shared target: `q [B, K]`,
    `target [B]` (no gradient flows into the target)."""
    err = q - jax.lax.stop_gradient(target)[:, None]
    loss = jnp.sum(jnp.mean(err**2, axis=0))
    return loss, {"critic_loss": loss, "q_mean": jnp.mean(q[:, 0])}
