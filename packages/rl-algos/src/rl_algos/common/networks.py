"""Equinox networks shared by the algorithms: orthogonally initialised MLPs (Saxe et al., 2014;
the PPO implementation details of Huang et al., 2022: hidden layers gain √2, policy head 0.01,
value head 1) and an actor-critic made of two separate torsos."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, ClassVar

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.config import ConfigError, require

ACTIVATIONS: dict[str, Callable[[jax.Array], jax.Array]] = {
    "tanh": jnp.tanh,
    "relu": jax.nn.relu,
    "gelu": jax.nn.gelu,
    "silu": jax.nn.silu,
}


def check_network(hidden_sizes: tuple[int, ...], activation: str) -> None:
    """An MLP's sizes are positive and its activation is known."""
    require(activation in ACTIVATIONS,
            f"activation must be one of {sorted(ACTIVATIONS)}, got '{activation}'")
    require(all(h >= 1 for h in hidden_sizes), f"hidden_sizes must be positive, got {hidden_sizes}")


def orthogonal_weight(key: jax.Array, shape: tuple[int, ...], scale: float) -> jax.Array:
    """An orthogonal matrix of gain `scale` (float32 `shape`).

    Under `vmap` (many seeds initialised at once) this runs one unbatched QR per member rather
    than one batched QR. jaxlib (0.10, CPU) splits a batched QR over the XLA intra-op thread pool
    and blocks its calling pool thread until the pieces finish; when a program runs two such QRs
    at once (actor and critic) on a small pool, every pool thread ends up waiting for pieces
    queued behind it and the process hangs forever in `block_until_ready` (reproduced with
    tools/stress_many_seeds.py; see docs/stress-many-seeds.md). Per member the weights are
    exactly those of the unbatched initialiser.
    """
    init = jax.nn.initializers.orthogonal(scale)
    return jax.custom_batching.sequential_vmap(lambda k: init(k, shape, jnp.float32))(key)


def orthogonal_linear(key: jax.Array, d_in: int, d_out: int, scale: float) -> eqx.nn.Linear:
    """A Linear layer with an orthogonal weight of gain `scale` and a zero bias."""
    layer = eqx.nn.Linear(d_in, d_out, key=key)
    w = orthogonal_weight(key, (d_out, d_in), scale)
    layer = eqx.tree_at(lambda m: m.weight, layer, w)
    return eqx.tree_at(lambda m: m.bias, layer, jnp.zeros((d_out,), jnp.float32))


class MLP(eqx.Module):
    """`x [d_in] -> [hidden[-1]]`, activation after every layer."""

    layers: list[eqx.nn.Linear]
    activation: str = eqx.field(static=True)

    def __init__(self, key: jax.Array, d_in: int, hidden: Sequence[int], activation: str):
        keys = jax.random.split(key, max(1, len(hidden)))
        sizes = [d_in, *hidden]
        # With no hidden layer there is one key and no layer: zip stops at the shortest.
        pairs = zip(keys, sizes[:-1], sizes[1:], strict=False)
        self.layers = [orthogonal_linear(k, a, b, 2.0**0.5) for k, a, b in pairs]
        self.activation = activation

    @property
    def out_size(self) -> int:
        return int(self.layers[-1].out_features) if self.layers else 0

    def __call__(self, x: jax.Array) -> jax.Array:
        act = ACTIVATIONS[self.activation]
        for layer in self.layers:
            x = act(layer(x))
        return x


def conv3x3(x: jax.Array, kernel: jax.Array, bias: jax.Array) -> jax.Array:
    """A 3x3 convolution, stride 1, zero "same" padding: `x [H, W, C]`, `kernel [3, 3, C, O]`,
    `bias [O]` -> `[H, W, O]` (a cross-correlation, as `lax.conv` and `eqx.nn.Conv2d` compute).

    Written as one contraction of the 3x3 patches with the kernel (`'hwijc,ijco->hwo'`) rather
    than `lax.conv`: under `vmap` a small convolution stays one matrix product `[B*H*W, 9C] @
    [9C, O]` and its weight gradient another, where XLA's CPU backend runs `lax.conv` (and its
    weight gradient above all) several times slower, and a convolution vmapped over members with
    different kernels as a grouped convolution, >10x slower than the contraction."""
    h, w, _ = x.shape
    padded = jnp.pad(x, ((1, 1), (1, 1), (0, 0)))
    patches = jnp.stack([jnp.stack([padded[i:i + h, j:j + w] for j in range(3)], axis=2)
                         for i in range(3)], axis=2)  # [H, W, 3, 3, C]
    return jnp.einsum("hwijc,ijco->hwo", patches, kernel) + bias


class ImageTorso(eqx.Module):
    """A 3x3 convolution (ReLU, stride 1, same padding) over one image-like part of a flat
    observation, for observations that are flat vectors by the time they reach the network
    (Jumanji's structured ones, `FlattenStructuredObservation`): `x [d_obs] -> [channels*H*W +
    d_obs - H*W*C]`, the part `x[offset : offset + H*W*C]` read as `[H, W, C]` and convolved, the
    other entries passed on unchanged. Stride 1 and no pooling keep every cell's position (a snake
    must know where its head is). The convolution is `conv3x3`'s patch contraction."""

    kernel: jax.Array  # [3, 3, C, channels]
    bias: jax.Array  # [channels]
    offset: int = eqx.field(static=True)
    shape: tuple[int, int, int] = eqx.field(static=True)

    def __init__(self, key: jax.Array, offset: int, shape: tuple[int, int, int], channels: int):
        bound = 1.0 / (9 * shape[2]) ** 0.5  # equinox's (and PyTorch's) Conv2d default
        self.kernel = jax.random.uniform(key, (3, 3, shape[2], channels), jnp.float32,
                                         -bound, bound)
        self.bias = jnp.zeros((channels,), jnp.float32)
        self.offset, self.shape = offset, shape

    def out_size(self, d_obs: int) -> int:
        h, w, c = self.shape
        return int(self.kernel.shape[-1]) * h * w + d_obs - h * w * c

    def __call__(self, x: jax.Array) -> jax.Array:
        h, w, c = self.shape
        end = self.offset + h * w * c
        features = jax.nn.relu(conv3x3(x[self.offset:end].reshape(h, w, c), self.kernel,
                                       self.bias))
        return jnp.concatenate([features.reshape(-1), x[:self.offset], x[end:]])


class ActorCritic(eqx.Module):
    """Separate actor and critic MLPs over a flat observation `[d_obs]`, optionally after one
    `ImageTorso` both share (`image=(offset, [H, W, C])`, `cnn_channels` filters).

    Returns `(policy_output [d_out], value [])`; for a Gaussian policy the output is the mean and
    `log_std` (state-independent, `[d_out]`) is a parameter of its own.

    With `actor_size` (a centralised critic, `rl_core.CentralisedCritic`; no torso) the actor
    reads `x[:actor_size]` (the agent's own observation) and the critic `x[actor_size:]` (the
    global state and the agent's id); `policy_output` runs the actor alone, so the same network
    acts on the environment's own observations `[actor_size]`.
    """

    actor: MLP
    critic: MLP
    policy_head: eqx.nn.Linear
    value_head: eqx.nn.Linear
    log_std: jax.Array | None
    torso: ImageTorso | None
    actor_size: int | None = eqx.field(static=True)
    # The critic's part, which an optimiser clips apart when `actor_size` makes two networks.
    CRITIC_FIELDS: ClassVar[frozenset[str]] = frozenset({"critic", "value_head"})

    def __init__(self, key: jax.Array, d_obs: int, d_out: int, hidden: Sequence[int],
                 activation: str, gaussian: bool,
                 image: tuple[int, tuple[int, int, int]] | None = None, cnn_channels: int = 0,
                 actor_size: int | None = None):
        if actor_size is not None and image is not None:
            raise ValueError("ActorCritic: actor_size splits a flat observation; it cannot be "
                             "combined with an image torso")
        ka, kc, kp, kv, kt = jax.random.split(key, 5)
        self.torso = None if image is None else ImageTorso(kt, image[0], image[1], cnn_channels)
        self.actor_size = actor_size
        d_in = d_obs if self.torso is None else self.torso.out_size(d_obs)
        d_actor, d_critic = (d_in, d_in) if actor_size is None else (actor_size,
                                                                     d_in - actor_size)
        self.actor = MLP(ka, d_actor, hidden, activation)
        self.critic = MLP(kc, d_critic, hidden, activation)
        self.policy_head = orthogonal_linear(kp, self.actor.out_size or d_actor, d_out, 0.01)
        self.value_head = orthogonal_linear(kv, self.critic.out_size or d_critic, 1, 1.0)
        self.log_std = jnp.zeros((d_out,), jnp.float32) if gaussian else None

    def __call__(self, x: jax.Array) -> tuple[Any, jax.Array]:
        x = x if self.torso is None else self.torso(x)
        return self._policy(x), self._value(x)

    def policy_output(self, x: jax.Array) -> Any:
        """The actor's output alone, from `x` or (with `actor_size`) from the agent's own
        observation `x[:actor_size]` (which may be all of `x`)."""
        return self._policy(x if self.torso is None else self.torso(x))

    def value(self, x: jax.Array) -> jax.Array:
        return self._value(x if self.torso is None else self.torso(x))

    def _policy(self, x: jax.Array) -> Any:
        out: Any = self.policy_head(self.actor(x if self.actor_size is None
                                               else x[:self.actor_size]))
        return out if self.log_std is None else (out, self.log_std)

    def _value(self, x: jax.Array) -> jax.Array:
        return self.value_head(self.critic(x if self.actor_size is None
                                           else x[self.actor_size:]))[0]


@jax.custom_vjp
def dense_fm(x_t: jax.Array, weight: jax.Array, bias: jax.Array) -> jax.Array:
    """A linear layer on feature-major activations: `weight [d_out, d_in] @ x_t [d_in, B] +
    bias -> [d_out, B]` (`eqx.nn.Linear`'s arithmetic, with the batch as the last axis)."""
    return weight @ x_t + bias[:, None]


def _dense_fm_fwd(x_t: jax.Array, weight: jax.Array, bias: jax.Array):
    return dense_fm(x_t, weight, bias), (x_t, weight)


def _dense_fm_bwd(res: tuple[jax.Array, jax.Array], g: jax.Array):
    """`dx_t = W.T @ g` (only the small weight is transposed), `dW = g @ x_t.T` (both operands
    contract their last, contiguous axis: no batch-sized transpose), `db = sum_b g`: the operand
    orders that measured fastest on XLA's CPU backend (docs/benchmarks.md, PPO levers)."""
    x_t, weight = res
    return weight.T @ g, g @ x_t.T, jnp.sum(g, axis=1)


dense_fm.defvjp(_dense_fm_fwd, _dense_fm_bwd)


def actor_critic_feature_major(model: ActorCritic, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
    """`model` on a batch `obs [B, d_obs]` with the MLPs run feature-major (activations
    `[features, B]`, every layer `dense_fm`): `(policy output [d_out, B], values [B])`, the same
    function as `jax.vmap(model)` up to float rounding (a Gaussian's `log_std` is left to the
    caller). Why: in the SGD the batch is the long axis; batch-major layers make XLA's CPU
    backend transpose batch-sized arrays for every weight gradient, feature-major ones do not
    (`PPOConfig.fast_update`; docs/benchmarks.md)."""
    x_t = _torso(model, obs).T
    outs = []
    for mlp, head in ((model.actor, model.policy_head), (model.critic, model.value_head)):
        act, h = ACTIVATIONS[mlp.activation], x_t
        for layer in mlp.layers:
            h = act(dense_fm(h, *_weight_bias(layer)))
        outs.append(dense_fm(h, *_weight_bias(head)))
    return outs[0], outs[1][0]


def _weight_bias(layer: eqx.nn.Linear) -> tuple[jax.Array, jax.Array]:
    """`(W [d_out, d_in], b [d_out])` of a layer of these networks."""
    if layer.bias is None:
        raise ValueError("the batch-major and feature-major paths need layers with a bias; "
                         "build them with orthogonal_linear (as ActorCritic does)")
    return layer.weight, layer.bias


def _materialised_t(weight: jax.Array) -> jax.Array:
    """`weight.T`, materialised once on the CPU (`optimization_barrier` keeps XLA from folding
    the transpose back into every product that uses it); elsewhere left to the products. Chosen
    when the program is lowered for its device (`lax.platform_dependent`)."""
    return jax.lax.platform_dependent(
        weight, cpu=lambda w: jax.lax.optimization_barrier(w.T), default=lambda w: w.T)


def actor_weights_t(model: ActorCritic) -> list[tuple[jax.Array, jax.Array]]:
    """The actor's layers and policy head as `(W.T [d_in, d_out], b [d_out])`, for a rollout: on
    the CPU each transpose is made once per rollout instead of inside every step (a step's
    `[N, 64]` activation then multiplies a row-major weight: docs/benchmarks.md, lever `t`)."""
    pairs = [_weight_bias(layer) for layer in [*model.actor.layers, model.policy_head]]
    return [(_materialised_t(w), b) for w, b in pairs]


def _mlp_batch_major(x: jax.Array, weights_t: list[tuple[jax.Array, jax.Array]],
                     activation: str) -> jax.Array:
    """`x [B, d_in]` through layers given as `(W.T, b)`, each one `x @ W.T + b` over the whole
    batch, the activation after every layer but the last: `[B, d_out]`."""
    act = ACTIVATIONS[activation]
    for w_t, b in weights_t[:-1]:
        x = act(x @ w_t + b)
    return x @ weights_t[-1][0] + weights_t[-1][1]


def _torso(model: ActorCritic, obs: jax.Array) -> jax.Array:
    return obs if model.torso is None else jax.vmap(model.torso)(obs)


def policy_batch_major(model: ActorCritic, obs: jax.Array,
                       weights_t: list[tuple[jax.Array, jax.Array]]) -> Any:
    """The policy output of `jax.vmap(model)(obs [B, d_obs])` without the critic, every layer one
    product over the batch, from `weights_t = actor_weights_t(model)` (vmapping `eqx.nn.Linear`
    adds layout ops around each product, costly inside a rollout's per-step loop on CPU); the
    same function up to float rounding."""
    out: Any = _mlp_batch_major(_torso(model, obs), weights_t, model.actor.activation)
    return out if model.log_std is None else (out, model.log_std)


def value_batch_major(model: ActorCritic, obs: jax.Array) -> jax.Array:
    """`jax.vmap(model.value)(obs [B, d_obs]) -> [B]`, every layer one product over the batch."""
    pairs = [_weight_bias(layer) for layer in [*model.critic.layers, model.value_head]]
    return _mlp_batch_major(_torso(model, obs), [(w.T, b) for w, b in pairs],
                            model.critic.activation)[:, 0]


def actor_critic_factory(dist: Any, d_obs: int, hidden: Sequence[int], activation: str,
                         image: tuple[int, tuple[int, int, int]] | None = None,
                         cnn_channels: int = 0,
                         actor_size: int | None = None) -> Callable[[jax.Array], ActorCritic]:
    """`key -> ActorCritic` for a flat observation `[d_obs]` and an action distribution from
    `distribution_for` (a Gaussian gets its state-independent `log_std`); `image=(offset,
    [H, W, C])` puts a shared convolution of `cnn_channels` filters over that part first;
    `actor_size` splits the observation between a decentralised actor and a centralised
    critic."""
    return partial(ActorCritic, d_obs=d_obs, d_out=dist.output_size, hidden=tuple(hidden),
                   activation=activation, gaussian=type(dist).__name__ == "DiagGaussian",
                   image=image, cnn_channels=cnn_channels, actor_size=actor_size)


def image_part(env: Any, part: str) -> tuple[int, tuple[int, int, int]]:
    """`(offset, (H, W, C))` of the observation part named `part` in a flattened structured
    observation (`env.layout`, from rl-core's `FlattenStructuredObservation`); a 2-D part gets
    one channel. Raises `ConfigError` saying which parts exist when it cannot."""
    layout = getattr(env, "layout", None)
    if not isinstance(layout, dict):
        raise ConfigError(
            f"cnn_part='{part}' needs an observation with named parts (jumanji's structured "
            "observations have them), but this environment's observation is one flat array; "
            "leave cnn_part empty")
    if part not in layout:
        raise ConfigError(f"cnn_part='{part}' is not a part of this observation; its parts: "
                          + ", ".join(f"{k} {tuple(v[1])}" for k, v in layout.items()))
    offset, shape = layout[part]
    if len(shape) == 2:
        shape = (*shape, 1)
    if len(shape) != 3:
        raise ConfigError(f"cnn_part='{part}' has shape {tuple(shape)}; a convolution needs an "
                          "image-like part of shape [H, W] or [H, W, C]")
    return int(offset), (int(shape[0]), int(shape[1]), int(shape[2]))
