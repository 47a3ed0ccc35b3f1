"""Acting with trained parameters outside a training run (evaluation, play): each algorithm with
a network gives a `Policy`, built from the same environment and config as its training program, so
the parameters a run saved (`params.eqx`, leading member axis) load into `like` and act at once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import numpy as np

from rl_algos.common.distributions import distribution_for
from rl_algos.common.networks import actor_critic_factory
from rl_core import flatten_observation

# (params, observations [N, ...], action mask [N, A] or None, key, greedy) -> actions [N]
ActFn = Callable[[Any, Any, jax.Array | None, jax.Array, bool], jax.Array]


class Policy(NamedTuple):
    """like: the parameters' structure for one agent (`jax.ShapeDtypeStruct` leaves), to
    deserialise saved parameters into; act: `act(params, obs, mask, key, greedy)`, illegal
    actions (mask False) never chosen; `greedy=False` acts as during training."""

    like: Any
    act: ActFn


def model_structure(make_model: Callable[[jax.Array], Any]) -> tuple[Any, Any]:
    """`(like, static)` of the Equinox model `make_model(key)` builds, without building it: the
    array leaves as `jax.ShapeDtypeStruct`s, and the rest (`eqx.combine(params, static)`)."""
    return eqx.partition(eqx.filter_eval_shape(make_model, jax.random.PRNGKey(0)),
                         lambda x: isinstance(x, jax.ShapeDtypeStruct))


def actor_critic_policy(env: Any, config: Any) -> Policy:
    """The policy of the actor-critic methods (PPO, DPO, VPG): the actor MLP over the flattened
    observation; greedy = the most probable legal action, else a sample."""
    if getattr(config, "normalize_observations", False):
        raise ValueError("this agent was trained with normalize_observations: the running "
                         "statistics are not saved with its parameters, so it cannot act "
                         "outside its training run")
    dist: Any = distribution_for(env.action_space)
    # the flattened observation's size, as FlattenObservation computes it for training
    d_obs = sum(int(np.prod(s.shape)) for s in jax.tree.leaves(
        env.observation_space, is_leaf=lambda s: hasattr(s, "shape")))
    make_model = actor_critic_factory(dist, d_obs, config.hidden_sizes, config.activation)
    like, static = model_structure(make_model)

    def act(params: Any, obs: Any, mask: jax.Array | None, key: jax.Array,
            greedy: bool) -> jax.Array:
        model = eqx.combine(params, static)
        out, _ = jax.vmap(model)(flatten_observation(obs, 1))
        p = dist.params(out, mask)
        return dist.mode(p) if greedy else dist.sample(key, p)

    return Policy(like, act)
