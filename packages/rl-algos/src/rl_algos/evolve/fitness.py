"""Fitness of meta-parameters: train PPO agents from scratch with them and score their final
return (`rl_core.final_return`, the definition every summary and test uses). Everything here is
pure: `make_evaluate` gives one function of the whole population that `jax.jit` compiles once
(the meta-parameters are a traced `[P]` input)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp

from rl_algos.evolve.targets import MetaTarget
from rl_algos.ppo.config import PPOConfig, PPOHParams
from rl_algos.ppo.train import make_algorithm as ppo_make_algorithm
from rl_core import FINAL_RETURN_WINDOW, final_return, make_train


def _final_return(metrics: dict[str, jax.Array], window: float) -> jax.Array:
    return final_return(metrics["episode_return_sum"], metrics["episode_count"], window)


def make_evaluate(
    target: MetaTarget,
    envs: Sequence[Any],
    config: PPOConfig,
    hparams: PPOHParams,
    window_fraction: float = FINAL_RETURN_WINDOW,
) -> Callable[[Any, jax.Array], jax.Array]:
    """`evaluate(meta [P, ...], keys [E, S]) -> returns [P, E, S]`: every member trains one PPO
    agent per environment `e` and inner seed `keys[e, s]` with its meta-parameters (all members
    share the same inner seeds: common random numbers make the ranking less noisy)."""
    trains = [make_train(target.make_algorithm(env, config)) for env in envs]

    def member(meta: Any, keys: jax.Array) -> jax.Array:
        hp = target.hparams(hparams, meta)
        out = [jax.vmap(lambda k, t=t: _final_return(t(k, hp).metrics, window_fraction))(ks)
               for t, ks in zip(trains, keys, strict=True)]
        return jnp.stack(out)

    return jax.vmap(member, in_axes=(0, None))


def make_baseline(
    envs: Sequence[Any],
    config: PPOConfig,
    hparams: PPOHParams,
    window_fraction: float = FINAL_RETURN_WINDOW,
) -> Callable[[jax.Array], jax.Array]:
    """`baseline(keys [E, S]) -> returns [E, S]` of the hand-designed PPO on the same budget and
    inner seeds as the population: the reference each generation is compared with, and the one
    that normalises fitness across environments."""
    trains = [make_train(ppo_make_algorithm(env, config)) for env in envs]

    def run(keys: jax.Array) -> jax.Array:
        return jnp.stack([jax.vmap(lambda k, t=t: _final_return(t(k, hparams).metrics,
                                                                window_fraction))(ks)
                          for t, ks in zip(trains, keys, strict=True)])

    return run


def combine_fitness(returns: jax.Array, baseline: jax.Array | None = None) -> jax.Array:
    """`returns [P, E, S] -> fitness [P]` (higher is better): the mean over inner seeds per
    environment, normalised by PPO's return `baseline [E]` when given — 1 + (R − R_PPO)/|R_PPO|,
    so 1 means "as good as PPO" on every environment whatever the sign or scale of its returns —
    then averaged over environments. A member whose agents finished no episode in the window
    (NaN) gets the population's worst finite fitness (or 0 if none is finite)."""
    per_env = jnp.nanmean(returns, axis=-1)  # [P, E]
    if baseline is not None:
        per_env = 1.0 + (per_env - baseline) / jnp.maximum(jnp.abs(baseline), 1e-3)
    fitness = jnp.mean(per_env, axis=-1)
    finite = jnp.isfinite(fitness)
    worst = jnp.where(jnp.any(finite), jnp.min(jnp.where(finite, fitness, jnp.inf)), 0.0)
    return jnp.where(finite, fitness, worst)
