"""Recurrent actor-critics: a GRU core between the torso and the heads, the policy with memory
that acts with it (`rl_core.Policy` with `initial_state` and `step`), and the replay of stored
sequences that the losses need.

The hidden state follows PureJaxRL's ppo_rnn.py: it is reset to zeros *before* the step whose
observation begins a new episode (`first`: `terminated | truncated` of the previous step), the
rollout keeps the state it started from and the `first` flag of every step, and the loss re-runs
the GRU over each environment's sequence from that stored state, with the same resets, so it
scores the actions with the very outputs the rollout acted on."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.distributions import distribution_for
from rl_algos.common.networks import MLP, orthogonal_linear
from rl_algos.common.policy import flat_size, model_structure, obs_norm_like, prepare_observation
from rl_core import Agent, Policy


def reset_hidden(h: jax.Array, first: jax.Array) -> jax.Array:
    """The state a step starts from: zeros where `first` (a new episode), else `h`. Shapes `h
    [..., H]`, `first [...]`."""
    return jnp.where(first[..., None], jnp.zeros_like(h), h)


def sequence_batch(traj: Any, h0: jax.Array, **per_step: jax.Array) -> dict[str, jax.Array]:
    """A rollout as a batch of whole environments: every per-step leaf `[T, N, ...]` (the
    observations, actions, the rollout's extras but the hidden states, and `per_step`) turned
    environment-major `[N, T, ...]`, and `h0 [N, H]` the hidden state each environment's
    sequence starts from. `sgd_epochs` then shuffles and cuts along environments."""
    batch = {"obs": traj.observation, "action": traj.action, **per_step,
             **{k: v for k, v in traj.extras.items() if k != "hidden"}}
    batch = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), batch)
    return {**batch, "h0": h0}


class RecurrentActorCritic(eqx.Module):
    """`torso` MLP (shared) -> `eqx.nn.GRUCell` of `rnn_hidden` units -> separate actor and
    critic MLPs (`head_sizes`) with PPO's orthogonal heads (gains 0.01 and 1). For one
    environment: `step(h [H], x [d_obs], first []) -> (h' [H], policy_output, value [])`; a
    Gaussian's state-independent `log_std` is a parameter of its own, as in `ActorCritic`."""

    torso: MLP
    cell: eqx.nn.GRUCell
    actor: MLP
    critic: MLP
    policy_head: eqx.nn.Linear
    value_head: eqx.nn.Linear
    log_std: jax.Array | None

    def __init__(self, key: jax.Array, d_obs: int, d_out: int, hidden: Sequence[int],
                 rnn_hidden: int, head_sizes: Sequence[int], activation: str, gaussian: bool):
        kt, kg, ka, kc, kp, kv = jax.random.split(key, 6)
        self.torso = MLP(kt, d_obs, hidden, activation)
        self.cell = eqx.nn.GRUCell(self.torso.out_size or d_obs, rnn_hidden, key=kg)
        self.actor = MLP(ka, rnn_hidden, head_sizes, activation)
        self.critic = MLP(kc, rnn_hidden, head_sizes, activation)
        self.policy_head = orthogonal_linear(kp, self.actor.out_size or rnn_hidden, d_out, 0.01)
        self.value_head = orthogonal_linear(kv, self.critic.out_size or rnn_hidden, 1, 1.0)
        self.log_std = jnp.zeros((d_out,), jnp.float32) if gaussian else None

    @property
    def hidden_size(self) -> int:
        return int(self.cell.hidden_size)

    def core(self, h: jax.Array, x: jax.Array) -> jax.Array:
        """The next hidden state after observing `x` from state `h` (no reset)."""
        return self.cell(self.torso(x), h)

    def heads(self, h: jax.Array) -> tuple[Any, jax.Array]:
        out: Any = self.policy_head(self.actor(h))
        if self.log_std is not None:
            out = (out, self.log_std)
        return out, self.value_head(self.critic(h))[0]

    def step(self, h: jax.Array, x: jax.Array, first: jax.Array) -> tuple[jax.Array, Any,
                                                                          jax.Array]:
        h = self.core(reset_hidden(h, first), x)
        out, value = self.heads(h)
        return h, out, value

    def value(self, h: jax.Array, x: jax.Array) -> jax.Array:
        """The value of observing `x` from state `h` without a reset (the true next observation
        of a step, whose episode the state belongs to)."""
        return self.heads(self.core(h, x))[1]

    def sequence(self, h0: jax.Array, xs: jax.Array, firsts: jax.Array) -> tuple[Any, jax.Array]:
        """One environment's stored sequence replayed: `xs [T, d_obs]`, `firsts [T]` from the
        state `h0 [H]` the rollout started from -> (policy outputs `[T, ...]`, values `[T]`),
        equal to what the rollout computed step by step."""

        def f(h, inp):
            h, out, value = self.step(h, *inp)
            return h, (out, value)

        return jax.lax.scan(f, h0, (xs, firsts))[1]


def recurrent_model(env: Any, config: Any) -> Callable[[jax.Array], RecurrentActorCritic]:
    """`key -> RecurrentActorCritic` for `env` (its observation flattened) and `config`
    (hidden_sizes, rnn_hidden, head_sizes, activation)."""
    dist = distribution_for(env.action_space)
    return partial(RecurrentActorCritic, d_obs=flat_size(env.observation_space),
                   d_out=dist.output_size, hidden=tuple(config.hidden_sizes),
                   rnn_hidden=config.rnn_hidden, head_sizes=tuple(config.head_sizes),
                   activation=config.activation,
                   gaussian=type(dist).__name__ == "DiagGaussian")


def recurrent_actor_critic_policy(env: Any, config: Any) -> Policy:
    """The policy with memory of the recurrent actor-critic (`ppo_rnn`): state `[N,
    rnn_hidden]` zeros at an episode's start; `step` resets it where `first`, advances the GRU
    on the (flattened, and with saved statistics normalised) observation, and acts from the new
    state as the feed-forward actor-critic policy does (greedy: the most probable legal action or
    the Gaussian's mean; otherwise a sample of the given noise). Extras: log-probability and
    value. `act` is `step` from fresh states (an episode's first action)."""
    dist: Any = distribution_for(env.action_space)
    make_model = recurrent_model(env, config)
    params_like, static = model_structure(make_model)
    like = Agent(params_like, obs_norm_like(config, flat_size(env.observation_space)))

    def initial_state(n: int) -> jax.Array:
        return jnp.zeros((n, config.rnn_hidden), jnp.float32)

    def step(agent: Agent, state: jax.Array, obs: Any, first: jax.Array, noise: Any,
             deterministic: bool, mask: jax.Array | None = None,
             explore: Any = None) -> tuple[jax.Array, Any, jax.Array]:
        model = eqx.combine(agent.params, static)
        h, out, value = jax.vmap(model.step)(state, prepare_observation(agent, obs), first)
        p = dist.params(out, mask)
        action = dist.mode(p) if deterministic else dist.sample_with(p, noise)
        extras = {"log_prob": dist.log_prob(p, action), "value": value}
        if mask is not None:
            extras["action_mask"] = mask
        return action, extras, h

    def act(agent: Agent, obs: Any, noise: Any, deterministic: bool,
            mask: jax.Array | None = None, explore: Any = None) -> tuple[jax.Array, Any]:
        n = jax.tree.leaves(obs)[0].shape[0]
        action, extras, _ = step(agent, initial_state(n), obs, jnp.ones((n,), jnp.bool_), noise,
                                 deterministic, mask, explore)
        return action, extras

    return Policy(like, act, dist.noise, initial_state, step)
