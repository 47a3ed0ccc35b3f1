"""Q-value building blocks shared by the value-based algorithms (PQN, recurrent PQN, DQN): the
max and argmax over legal actions, ε-greedy acting and its linear schedule, the ε-greedy acting
path (`q_policy`) and what a Q-learner acts and learns with (`q_agent`), the check of Discrete
actions and Box observations, Q(λ) returns (Gallici et
al., 2024, Eq. 5; Watkins, 1989) and the squared TD loss. Shapes: `T` steps, `N` environments,
`A` actions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.config import ConfigError
from rl_algos.common.envs import make_vector_env
from rl_algos.common.policy import model_structure
from rl_core import Agent, Box, Discrete, Policy

NEG_INF = -1e30  # masked Q-values: below every real one, finite to keep arithmetic clean
# ε of the sampling (non-greedy) evaluation policy: the evaluation ε of Mnih et al. (2015).
EVAL_EPSILON = 0.05


def masked_max(q: jax.Array, mask: jax.Array | None) -> jax.Array:
    """max over the legal actions of `q [..., A]`."""
    return jnp.max(q if mask is None else jnp.where(mask, q, NEG_INF), axis=-1)


def masked_argmax(q: jax.Array, mask: jax.Array | None) -> jax.Array:
    """The legal action of highest Q, `q [N, A] -> [N]` (lowest index among ties)."""
    return jnp.argmax(q if mask is None else jnp.where(mask, q, NEG_INF), axis=-1)


def epsilon_greedy(q: jax.Array, mask: jax.Array | None, eps: jax.Array | float,
                   key: jax.Array) -> jax.Array:
    """int32 `[N]` actions for Q-values `q [N, A]`: with probability `eps` uniform over the legal
    actions (mask True), else the legal action of highest Q."""
    legal = jnp.ones_like(q, jnp.bool_) if mask is None else mask
    greedy = masked_argmax(q, mask)
    k_explore, k_action = jax.random.split(key)
    random_action = jax.random.categorical(k_action, jnp.where(legal, 0.0, -jnp.inf))
    explore = jax.random.uniform(k_explore, greedy.shape) < eps
    return jnp.where(explore, random_action, greedy).astype(jnp.int32)


def epsilon_at(update: jax.Array, num_updates: int, hp: Any) -> jax.Array:
    """Linear decay from eps_start to eps_finish over the first eps_decay of the updates."""
    frac = jnp.clip(update.astype(jnp.float32) / (hp.eps_decay * num_updates), 0.0, 1.0)
    return hp.eps_start + (hp.eps_finish - hp.eps_start) * frac


def check_spaces(env: Any, algo: str) -> None:
    """Discrete actions and Box observations, or a `ConfigError` saying what to pick instead."""
    if not isinstance(env.action_space, Discrete):
        raise ConfigError(f"{algo} needs a Discrete action space, got "
                          f"{type(env.action_space).__name__}; pick another algorithm.")
    if not isinstance(env.observation_space, Box):
        raise ConfigError(f"{algo} learns from Box observations, got "
                          f"{type(env.observation_space).__name__}; for discrete states use "
                          "'qlearning'.")


def q_policy(make_model: Callable[[jax.Array], Any]) -> Policy:
    """The ε-greedy acting of a Q-network `key -> model` (`model(obs) -> Q [A]`, applied per
    observation) that PQN and DQN share: greedy over the legal actions, or ε-greedy with ε =
    `explore` (the schedule's value while training; `EVAL_EPSILON` when None). The noise is a
    key; the extras are `{"q": Q [N, A]}`, the values it acted on (PQN bootstraps from them)."""
    params_like, static = model_structure(make_model)

    def act(agent: Agent, obs: jax.Array, noise: jax.Array, deterministic: bool,
            mask: jax.Array | None = None, explore: Any = None) -> tuple[jax.Array, Any]:
        q = jax.vmap(eqx.combine(agent.params, static))(obs)  # [N, A]
        if deterministic:
            return masked_argmax(q, mask).astype(jnp.int32), {"q": q}
        eps = EVAL_EPSILON if explore is None else explore
        return epsilon_greedy(q, mask, eps, noise), {"q": q}

    return Policy(Agent(params_like), act, lambda key, shape: key)


class QAgent(NamedTuple):
    """What a feed-forward Q-learner (PQN, DQN) acts and learns with: its vectorised
    environments (observations kept in their own shape, so an image reaches the convolution),
    the network builder `key -> model`, the acting `Policy` (`q_policy`), `q_values(params, obs
    [B, ...]) -> [B, A]`, and `act(params, eps, timestep, key)`: ε-greedy over the legal actions
    (`timestep.info["action_mask"]` where the environment has one), for `rollout`."""

    venv: Any
    make_model: Callable[[jax.Array], Any]
    policy: Policy
    q_values: Callable[[Any, jax.Array], jax.Array]
    act: Callable[..., tuple[jax.Array, Any]]


def q_agent(env: Any, make_model: Callable[[jax.Array], Any], num_envs: int) -> QAgent:
    venv = make_vector_env(env, num_envs, flatten=False)
    static = model_structure(make_model)[1]
    policy = q_policy(make_model)

    def q_values(params: Any, obs: jax.Array) -> jax.Array:
        return jax.vmap(eqx.combine(params, static))(obs)

    def act(params: Any, eps: jax.Array, ts: Any, key: jax.Array) -> tuple[jax.Array, Any]:
        return policy.act(Agent(params), ts.observation, key, False, ts.info.get("action_mask"),
                          eps)

    return QAgent(venv, make_model, policy, q_values, act)


def q_lambda_returns(
    rewards: jax.Array,
    next_q_max: jax.Array,
    terminated: jax.Array,
    truncated: jax.Array,
    gamma: jax.Array | float,
    lam: jax.Array | float,
    turn_sign: jax.Array | None = None,
) -> jax.Array:
    """Q(λ) returns over a rollout, computed backwards:

        G_t = r_t + γ (1 − terminated_t) · B_t,
        B_t = max_a Q(s'_t, a)                                  if done_t or t = T − 1
            = λ G_{t+1} + (1 − λ) max_a Q(s'_t, a)              otherwise

    with s'_t the true next state (the final one when the episode ended) and the max over its
    legal actions. A terminated step does not bootstrap; a truncated one bootstraps from
    max Q(s'_t) and never from G_{t+1}, which belongs to the next episode.

    In self-play (`turn_sign [T, ...]`, -1 where s'_t is the other player's position: a
    self-play environment's `info["turn_sign"]`) the next position's values are the opponent's,
    so they count negated (negamax): γ becomes γ·turn_sign_t. The max stays the opponent's own
    best move, as Q is always the mover's."""
    done = jnp.logical_or(terminated, truncated)
    not_term = 1.0 - terminated.astype(jnp.float32)
    if turn_sign is not None:  # a discount per step
        def signed(g_next, x):
            r, q_max, nt, d, g_t = x
            boot = jnp.where(d, q_max, lam * g_next + (1.0 - lam) * q_max)
            g = r + g_t * nt * boot
            return g, g

        _, returns = jax.lax.scan(signed, next_q_max[-1], (rewards, next_q_max, not_term, done,
                                                           gamma * turn_sign), reverse=True)
        return returns

    def step(g_next, x):
        r, q_max, nt, d = x
        boot = jnp.where(d, q_max, lam * g_next + (1.0 - lam) * q_max)
        g = r + gamma * nt * boot
        return g, g

    # At t = T − 1, g_next = max Q(s'_{T−1}) makes B = max Q(s'_{T−1}) for any λ.
    _, returns = jax.lax.scan(step, next_q_max[-1],
                              (rewards, next_q_max, not_term, done), reverse=True)
    return returns


def q_loss(q_taken: jax.Array, targets: jax.Array, hp: Any) -> tuple[jax.Array,
                                                                    dict[str, jax.Array]]:
    """0.5·E[(Q(s, a) − G)²] with the Q(λ) targets held fixed."""
    err = q_taken - jax.lax.stop_gradient(targets)
    loss = 0.5 * jnp.mean(err**2)
    return loss, {"loss/q": loss, "q/taken_mean": jnp.mean(q_taken)}
