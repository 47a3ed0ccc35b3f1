"""The outer loop: an evosax 0.3 strategy proposes meta-parameters, the population is scored, the
strategy is told. evosax *minimises*, so it is told the negated fitness.

One generation with key k: `k_ask, k_eval, k_tell = split(fold_in(root, generation), 3)`; the
inner seeds are `split(k_eval, E·S)`, shared by every member and by the hand-designed reference
(common random numbers: members are ranked, and compared with PPO, on the same seeds). Keys
depend only on the root key and the generation index, so a run resumed from a saved strategy
state repeats an uninterrupted run exactly."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from rl_algos.common.config import ConfigError

STRATEGIES = ("open_es", "snes", "cma_es")


class Strategy(NamedTuple):
    es: Any  # an evosax algorithm
    params: Any  # its parameters (evosax `Params`)


def make_strategy(name: str, population: int, template: Any, sigma: float,
                  lr: float) -> Strategy:
    """`open_es` (Salimans et al., 2017; Adam on the centred-rank gradient estimate, constant
    noise `sigma`), `snes` (Wierstra et al., 2014) or `cma_es` (Hansen, 2016), both starting with
    standard deviation `sigma`; `template` is a meta-parameter pytree."""
    from evosax.algorithms import CMA_ES, SNES, Open_ES

    if name not in STRATEGIES:
        raise ConfigError(f"unknown strategy '{name}'; known: {', '.join(STRATEGIES)}")
    if population < 2:
        raise ConfigError(f"the population must have at least 2 members, got {population}")
    if name == "open_es":
        if population % 2:
            raise ConfigError(f"open_es samples antithetic pairs and needs an even population, "
                              f"got {population}; use {population + 1}")
        es = Open_ES(population, template, optimizer=optax.adam(lr),
                     std_schedule=optax.constant_schedule(sigma))
        return Strategy(es, es.default_params)
    es = SNES(population, template) if name == "snes" else CMA_ES(population, template)
    return Strategy(es, es.default_params.replace(std_init=jnp.asarray(sigma, jnp.float32)))


# fold_in indices reserved for the start of a run (generations use 0, 1, 2, ...).
_INIT_INDEX = 2**31 - 1


def strong_types(tree: Any) -> Any:
    """Every leaf as a strongly typed array of its dtype. evosax's states mix weakly typed leaves
    (from Python scalars) that `tell` returns strongly typed, and a jitted `ask`/`tell` would
    silently compile again for the second generation; normalising after every call keeps one
    signature, hence one compilation, for the whole run."""
    return jax.tree.map(lambda x: jnp.array(x, dtype=jnp.asarray(x).dtype), tree)


def initial_state(strategy: Strategy, root: jax.Array, mean: Any) -> Any:
    """The strategy's state at generation 0, centred on the meta-parameters `mean`."""
    return strong_types(strategy.es.init(jax.random.fold_in(root, _INIT_INDEX), mean,
                                         strategy.params))


def generation_keys(root: jax.Array, generation: int) -> tuple[jax.Array, jax.Array, jax.Array]:
    k_ask, k_eval, k_tell = jax.random.split(jax.random.fold_in(root, generation), 3)
    return k_ask, k_eval, k_tell


def inner_keys(k_eval: jax.Array, num_envs: int, num_seeds: int) -> jax.Array:
    """`[E, S]` keys for the inner training runs of one generation (shared by all members)."""
    return jax.random.split(k_eval, num_envs * num_seeds).reshape(num_envs, num_seeds, -1)


class GenerationResult(NamedTuple):
    generation: int
    fitness: np.ndarray  # [P], higher is better
    returns: np.ndarray  # [P, E, S] raw final returns of the inner agents
    reference: np.ndarray | None  # [E, S] the hand-designed algorithm's, same inner seeds
    best_index: int  # member with the best fitness this generation
    best_params: Any  # its meta-parameters (host numpy pytree)


def run_generation(
    strategy: Strategy,
    state: Any,
    root: jax.Array,
    generation: int,
    evaluate: Callable[[Any, jax.Array], jax.Array],
    num_envs: int,
    num_seeds: int,
    fitness_of: Callable[[jax.Array, jax.Array | None], jax.Array],
    reference: Callable[[jax.Array], jax.Array] | None = None,
) -> tuple[Any, GenerationResult]:
    """ask → `evaluate(population, keys [E, S]) -> returns [P, E, S]` (and, if given,
    `reference(keys) -> [E, S]`: the hand-designed algorithm on the same inner seeds) →
    `fitness_of(returns, reference_returns) -> [P]` → tell(−fitness). Returns the new strategy
    state and what happened."""
    es, params = strategy
    k_ask, k_eval, k_tell = generation_keys(root, generation)
    population, state = es.ask(k_ask, state, params)
    state = strong_types(state)
    keys = inner_keys(k_eval, num_envs, num_seeds)
    returns = evaluate(population, keys)
    ref = None if reference is None else reference(keys)
    fitness = fitness_of(returns, ref)
    state, _ = es.tell(k_tell, population, -fitness, state, params)
    state = strong_types(state)
    fitness_np = np.asarray(fitness)
    best = int(np.argmax(fitness_np))
    best_params = jax.tree.map(lambda x: np.asarray(x[best]), population)
    return state, GenerationResult(generation, fitness_np, np.asarray(returns),
                                   None if ref is None else np.asarray(ref), best, best_params)
