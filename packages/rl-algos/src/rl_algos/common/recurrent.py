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
from typing import Any, ClassVar

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


def gru_sequence(cell: eqx.nn.GRUCell, h0: jax.Array, xs: jax.Array,
                 firsts: jax.Array) -> jax.Array:
    """`cell` run over one stored sequence: inputs `xs [T, in]` from the state `h0 [H]`, the
    state reset to zeros before each step where `firsts [T]` -> the state after every step
    `[T, H]`. The formula is `eqx.nn.GRUCell.__call__`'s, split so that the input's projection
    of all T steps is one `[T, in] x [in, 3H]` product before the scan and the scan carries only
    the recurrent `[H] x [H, 3H]` half: replaying sequences in a loss costs a fraction of
    scanning the whole cell step by step (and its gradient is one product too)."""
    zero = jnp.zeros((), xs.dtype)
    bias = zero if cell.bias is None else cell.bias
    bias_n = zero if cell.bias_n is None else cell.bias_n
    gates_in = xs @ cell.weight_ih.T + bias  # [T, 3H]

    def f(h: jax.Array, inp: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        g, first = inp
        h = reset_hidden(h, first)
        i_r, i_z, i_n = jnp.split(g, 3)
        h_r, h_z, h_n = jnp.split(cell.weight_hh @ h, 3)
        r, z = jax.nn.sigmoid(i_r + h_r), jax.nn.sigmoid(i_z + h_z)
        n = jnp.tanh(i_n + r * (h_n + bias_n))
        h = n + z * (h - n)
        return h, h

    return jax.lax.scan(f, h0, (gates_in, firsts))[1]


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
    Gaussian's state-independent `log_std` is a parameter of its own, as in `ActorCritic`.

    With `actor_size` (a centralised critic, `rl_core.CentralisedCritic`: recurrent MAPPO, as
    JaxMARL's `mappo_rnn` baselines build it) actor and critic are two recurrent networks: the
    actor's torso and GRU read `x[:actor_size]` (the agent's own observation), the critic's
    (`critic_torso`, `critic_cell`) read `x[actor_size:]` (the global state and the agent's
    id). The state `[2 * rnn_hidden]` holds the actor's then the critic's; `actor_step` advances
    the actor alone, so the same network acts on the environment's own observations."""

    torso: MLP
    cell: eqx.nn.GRUCell
    actor: MLP
    critic: MLP
    policy_head: eqx.nn.Linear
    value_head: eqx.nn.Linear
    log_std: jax.Array | None
    critic_torso: MLP | None
    critic_cell: eqx.nn.GRUCell | None
    actor_size: int | None = eqx.field(static=True)
    # The critic's part, which an optimiser clips apart when `actor_size` makes two networks.
    CRITIC_FIELDS: ClassVar[frozenset[str]] = frozenset({"critic_torso", "critic_cell",
                                                         "critic", "value_head"})

    def __init__(self, key: jax.Array, d_obs: int, d_out: int, hidden: Sequence[int],
                 rnn_hidden: int, head_sizes: Sequence[int], activation: str, gaussian: bool,
                 actor_size: int | None = None):
        kt, kg, ka, kc, kp, kv = jax.random.split(key, 6)
        self.actor_size = actor_size
        d_actor = d_obs if actor_size is None else actor_size
        self.torso = MLP(kt, d_actor, hidden, activation)
        self.cell = eqx.nn.GRUCell(self.torso.out_size or d_actor, rnn_hidden, key=kg)
        if actor_size is None:
            self.critic_torso = self.critic_cell = None
        else:
            kc, kt2, kg2 = jax.random.split(kc, 3)  # the critic's head and recurrent input
            self.critic_torso = MLP(kt2, d_obs - actor_size, hidden, activation)
            self.critic_cell = eqx.nn.GRUCell(self.critic_torso.out_size or d_obs - actor_size,
                                              rnn_hidden, key=kg2)
        self.actor = MLP(ka, rnn_hidden, head_sizes, activation)
        self.critic = MLP(kc, rnn_hidden, head_sizes, activation)
        self.policy_head = orthogonal_linear(kp, self.actor.out_size or rnn_hidden, d_out, 0.01)
        self.value_head = orthogonal_linear(kv, self.critic.out_size or rnn_hidden, 1, 1.0)
        self.log_std = jnp.zeros((d_out,), jnp.float32) if gaussian else None

    @property
    def hidden_size(self) -> int:
        """The size of the state: the GRU's, or the actor's and the critic's together."""
        return int(self.cell.hidden_size) * (1 if self.actor_size is None else 2)

    def core(self, h: jax.Array, x: jax.Array) -> jax.Array:
        """The next hidden state after observing `x` from state `h` (no reset)."""
        if self.critic_cell is None or self.critic_torso is None:
            return self.cell(self.torso(x), h)
        n, d = self.cell.hidden_size, self.actor_size
        return jnp.concatenate([self.cell(self.torso(x[:d]), h[:n]),
                                self.critic_cell(self.critic_torso(x[d:]), h[n:])])

    def _policy(self, h_actor: jax.Array) -> Any:
        out: Any = self.policy_head(self.actor(h_actor))
        return out if self.log_std is None else (out, self.log_std)

    def heads(self, h: jax.Array) -> tuple[Any, jax.Array]:
        n = self.cell.hidden_size
        h_actor, h_critic = (h, h) if self.actor_size is None else (h[:n], h[n:])
        return self._policy(h_actor), self.value_head(self.critic(h_critic))[0]

    def step(self, h: jax.Array, x: jax.Array, first: jax.Array) -> tuple[jax.Array, Any,
                                                                          jax.Array]:
        h = self.core(reset_hidden(h, first), x)
        out, value = self.heads(h)
        return h, out, value

    def actor_step(self, h: jax.Array, x: jax.Array, first: jax.Array) -> tuple[jax.Array, Any]:
        """With `actor_size`: the actor alone on the agent's own observation `x [actor_size]`
        (the critic's half of the state is left as it is) -> `(h', policy_output)`."""
        n = self.cell.hidden_size
        h = reset_hidden(h, first)
        h_actor = self.cell(self.torso(x), h[:n])
        return h.at[:n].set(h_actor), self._policy(h_actor)

    def value(self, h: jax.Array, x: jax.Array) -> jax.Array:
        """The value of observing `x` from state `h` without a reset (the true next observation
        of a step, whose episode the state belongs to)."""
        return self.heads(self.core(h, x))[1]

    def sequence(self, h0: jax.Array, xs: jax.Array, firsts: jax.Array) -> tuple[Any, jax.Array]:
        """One environment's stored sequence replayed: `xs [T, d_obs]`, `firsts [T]` from the
        state `h0 [H]` the rollout started from -> (policy outputs `[T, ...]`, values `[T]`),
        equal to what the rollout computed step by step: the torsos and the heads run on all T
        steps at once, only the GRUs' recurrence step by step (`gru_sequence`)."""
        if self.critic_cell is None or self.critic_torso is None:
            hs = gru_sequence(self.cell, h0, jax.vmap(self.torso)(xs), firsts)
        else:
            n, d = self.cell.hidden_size, self.actor_size
            hs = jnp.concatenate([
                gru_sequence(self.cell, h0[:n], jax.vmap(self.torso)(xs[:, :d]), firsts),
                gru_sequence(self.critic_cell, h0[n:], jax.vmap(self.critic_torso)(xs[:, d:]),
                             firsts)], axis=-1)
        return jax.vmap(self.heads)(hs)


def recurrent_model(env: Any, config: Any) -> Callable[[jax.Array], RecurrentActorCritic]:
    """`key -> RecurrentActorCritic` for `env` (its observation flattened) and `config`
    (hidden_sizes, rnn_hidden, head_sizes, activation); an environment with an `actor_size`
    (`rl_core.CentralisedCritic`) gets a recurrent actor and a recurrent centralised critic."""
    dist = distribution_for(env.action_space)
    return partial(RecurrentActorCritic, d_obs=flat_size(env.observation_space),
                   d_out=dist.output_size, hidden=tuple(config.hidden_sizes),
                   rnn_hidden=config.rnn_hidden, head_sizes=tuple(config.head_sizes),
                   activation=config.activation,
                   gaussian=type(dist).__name__ == "DiagGaussian",
                   actor_size=getattr(env, "actor_size", None))


def recurrent_actor_critic_policy(env: Any, config: Any) -> Policy:
    """The policy with memory of the recurrent actor-critic (`ppo_rnn`): state `[N,
    rnn_hidden]` zeros at an episode's start; `step` resets it where `first`, advances the GRU
    on the (flattened, and with saved statistics normalised) observation, and acts from the new
    state as the feed-forward actor-critic policy does (greedy: the most probable legal action or
    the Gaussian's mean; otherwise a sample of the given noise). Extras: log-probability and
    value. `act` is `step` from fresh states (an episode's first action).

    With a centralised critic (`env.actor_size`) the state is `[N, 2 * rnn_hidden]`, and on the
    environment's own observations `[N, actor_size]` (evaluation, rendering) the actor acts
    alone, with a value of 0."""
    dist: Any = distribution_for(env.action_space)
    make_model = recurrent_model(env, config)
    params_like, static = model_structure(make_model)
    like = Agent(params_like, obs_norm_like(config, flat_size(env.observation_space)))
    actor_size = getattr(env, "actor_size", None)
    state_size = eqx.combine(params_like, static).hidden_size

    def initial_state(n: int) -> jax.Array:
        return jnp.zeros((n, state_size), jnp.float32)

    def step(agent: Agent, state: jax.Array, obs: Any, first: jax.Array, noise: Any,
             deterministic: bool, mask: jax.Array | None = None,
             explore: Any = None) -> tuple[jax.Array, Any, jax.Array]:
        model = eqx.combine(agent.params, static)
        x = prepare_observation(agent, obs)
        if actor_size is not None and x.shape[-1] == actor_size:
            h, out = jax.vmap(model.actor_step)(state, x, first)
            value = jnp.zeros(x.shape[:1], jnp.float32)
        else:
            h, out, value = jax.vmap(model.step)(state, x, first)
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
