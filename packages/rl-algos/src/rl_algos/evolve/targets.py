"""Meta-targets: the parts of PPO that `rl evolve` can replace by an evolved meta-network.

A `MetaTarget` knows how to build the meta-network's parameters, how to plug them into PPO (as a
field of the traced hparams, so that a population of meta-parameters is one `[P]` input of one
compiled program), and how to draw the learned function next to the hand-designed one it
replaces:

* `drift` (LPO, Lu et al., 2022): f_θ(r, A) replacing PPO's clip, see `rl_algos.lpo.drift`;
* `ta_lpo` (temporally-aware LPO, Jackson et al., ICLR 2024): f_θ(r, A, p), the drift also
  reading the training progress p = n/N; drawn at several p;
* `value_loss`: L_θ(V, target) replacing PPO's squared error ½(V − target)², built like the drift
  (`anchored` at V = target: zero, flat and non-negative there, so a perfect prediction is a
  minimum), on features (e, e², target, e·target) of the error e = V − target.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from rl_algos.common.config import ConfigError, hparams
from rl_algos.common.meta import MetaMLP, anchored, init_meta_mlp, meta_mlp
from rl_algos.lpo import LPOHParams, init_drift, init_ta_drift, learned_drift, ppo_drift
from rl_algos.lpo import make_algorithm as lpo_make_algorithm
from rl_algos.ppo.config import PPOHParams
from rl_algos.ppo.train import make_algorithm as ppo_make_algorithm
from rl_core import Algorithm

VALUE_LOSS_FEATURES = 4


def value_loss_features(value: jax.Array, target: jax.Array) -> jax.Array:
    """`[...], [...] -> [..., 4]`: (e, e², target, e·target) with e = value − target."""
    e = value - target
    return jnp.stack([e, e * e, target, e * target], axis=-1)


def learned_value_loss(params: MetaMLP, value: jax.Array, target: jax.Array) -> jax.Array:
    """L_θ(V, target) ≥ 0 per sample, zero with zero V-gradient at V = target."""
    return anchored(lambda v: meta_mlp(params, value_loss_features(v, target)), value, target)


@hparams
class ValueLossHParams(PPOHParams):
    """PPO's traced hyperparameters plus `value_loss`, the learned value loss's parameters."""

    value_loss: Any = None


def _learned_value_loss_at(params: MetaMLP, value: jax.Array, target: jax.Array,
                           progress: float) -> jax.Array:
    del progress  # the learned value loss does not read the training progress
    return learned_value_loss(params, value, target)


def _value_loss_hook(value: jax.Array, old_value: jax.Array, target: jax.Array,
                     hp: Any) -> jax.Array:
    del old_value  # the learned loss replaces the clipped squared error entirely
    return jnp.mean(learned_value_loss(hp.value_loss, value, target))


class GridPlot(NamedTuple):
    """How to draw a target's function on a 2-D grid: axis names and ranges (x is the first
    argument of `learned`/`hand`), and titles."""

    x_label: str
    x_range: tuple[float, float]
    y_label: str
    y_range: tuple[float, float]
    learned_title: str
    hand_title: str


class MetaTarget(NamedTuple):
    name: str
    description: str
    init: Callable[[jax.Array, int, float], MetaMLP]  # (key, hidden, scale) -> params
    hparams: Callable[[PPOHParams, Any], Any]  # PPO hparams + meta-params -> the target's hp
    make_algorithm: Callable[..., Algorithm]  # (env, PPOConfig) -> Algorithm
    # (params, x, y, progress) -> the function on a grid, at training progress p = n/N
    learned: Callable[[MetaMLP, jax.Array, jax.Array, float], jax.Array]
    hand: Callable[[jax.Array, jax.Array, PPOHParams], jax.Array]  # the hand-designed one
    plot: GridPlot
    # The training progress values to draw the learned function at; `()`: it does not read p.
    progress_panels: tuple[float, ...] = ()


def _drift_on_log_ratio(params: MetaMLP, log_ratio: jax.Array, adv: jax.Array,
                        progress: float) -> jax.Array:
    return learned_drift(params, jnp.exp(log_ratio), adv, progress)


def _ppo_drift_on_log_ratio(log_ratio: jax.Array, adv: jax.Array, hp: PPOHParams) -> jax.Array:
    return ppo_drift(jnp.exp(log_ratio), adv, hp.clip_eps)


def _drift_target(name: str, description: str, init: Callable[..., MetaMLP], learned_title: str,
                  progress_panels: tuple[float, ...] = ()) -> MetaTarget:
    """An LPO drift target (plain or temporally-aware: the drift's `init` decides): LPO's
    algorithm with the meta-parameters as `LPOHParams.drift`, drawn over (log r, A) beside PPO's
    drift."""
    return MetaTarget(
        name, description, lambda key, hidden, scale: init(key, hidden, scale),
        lambda hp, meta: LPOHParams(**hp._asdict(), drift=meta), lpo_make_algorithm,
        _drift_on_log_ratio, _ppo_drift_on_log_ratio,
        GridPlot("log r", (-0.5, 0.5), "advantage A", (-3.0, 3.0), learned_title,
                 "PPO's drift ReLU((r - clip(r, 1±ε))A)"),
        progress_panels)


TARGETS: dict[str, MetaTarget] = {
    "drift": _drift_target(
        "drift", "LPO drift f(r, A) replacing PPO's clipped objective (Lu et al., 2022)",
        init_drift, "evolved drift f(r, A)"),
    "ta_lpo": _drift_target(
        "ta_lpo", "temporally-aware LPO drift f(r, A, n/N), reading the training progress "
                  "(Jackson et al., 2024)",
        init_ta_drift, "evolved drift f(r, A, n/N)", progress_panels=(0.0, 0.5, 0.9)),
    "value_loss": MetaTarget(
        "value_loss", "value loss L(V, target) replacing PPO's squared error",
        lambda key, hidden, scale: init_meta_mlp(key, VALUE_LOSS_FEATURES, hidden, scale),
        lambda hp, meta: ValueLossHParams(**hp._asdict(), value_loss=meta),
        lambda env, config: ppo_make_algorithm(env, config, value_loss_fn=_value_loss_hook),
        _learned_value_loss_at, lambda v, t, hp: 0.5 * (v - t) ** 2,
        GridPlot("prediction V", (-5.0, 5.0), "target", (-5.0, 5.0),
                 "evolved value loss L(V, target)", "PPO's value loss ½(V - target)²"),
    ),
}


def get_target(name: str) -> MetaTarget:
    if name not in TARGETS:
        raise ConfigError(f"unknown meta-target '{name}'; known: {', '.join(TARGETS)}")
    return TARGETS[name]
