"""Tabular Q-learning's training program.

Each agent owns a table `Q [num_states, num_actions]` (float32) and steps `num_envs` environments
in lockstep. Every step, for each environment:

    a  = ε-greedy(Q[s]), ties among maximal Q[s, ·] broken uniformly at random
    s', r, terminated, truncated = env.step(s, a)            (s' the true next state)
    Q[s, a] ← Q[s, a] + α (r + γ (1 − terminated) max_b Q[s', b] − Q[s, a])

A truncated episode bootstraps from its true last state; a terminated one does not. All the
environments' updates of one step are applied at once from the same table (synchronous batched
Q-learning); when several environments update the same (s, a) in one step, one of their updates
is applied (with a deterministic environment they are identical).

Speed (every op of a step is over the `num_envs` environments at once, and agents are vmapped):
two threefry words per update of an agent are spread over its steps and environments by an
integer hash (`hash_words`) into the two words of the ε-greedy choice and the key of each
environment's reset; the choice itself is fused arithmetic (no table lookup); the update is two
row gathers and one scatter, which under `vmap` over agents index the agents' tables flattened
into one (`take_rows`, `set_entries`) instead of vmap's generic batched indexing; the step
loop carries as few arrays as it can (each array a step writes is a CPU kernel of its own); the
whole update is a `lax.scan` with nothing on the host.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.interpreters import partial_eval as pe

from rl_algos.common.batching import with_batch_axis
from rl_algos.common.config import ConfigError
from rl_algos.qlearning.config import QLearningConfig
from rl_core import Agent, Algorithm, Discrete, Policy, RunnerState, TrainResult, TrainState
from rl_core import make_train as _make_train


def _check_spaces(env: Any) -> tuple[int, int]:
    obs, act = env.observation_space, env.action_space
    if not isinstance(obs, Discrete):
        raise ConfigError(
            f"qlearning is tabular: it needs a Discrete observation space (a state index), but "
            f"this environment observes {type(obs).__name__}{getattr(obs, 'shape', '')}; use it "
            "on an environment with discrete states such as 'native/GridWorld', or pick a deep "
            "algorithm (`rl algos` lists them)."
        )
    if not isinstance(act, Discrete):
        raise ConfigError(
            f"qlearning needs a Discrete action space, but this environment's actions are "
            f"{type(act).__name__}; pick another algorithm (`rl algos` lists them)."
        )
    return obs.n, act.n


_GOLDEN = np.uint32(0x9E3779B9)
# ε of the sampling (non-greedy) evaluation policy: the evaluation ε of Mnih et al. (2015).
EVAL_EPSILON = 0.05


def _lowbias32(x: jax.Array) -> jax.Array:
    """Wellons's "lowbias32" integer hash of uint32 `x` (full avalanche; a bijection)."""
    x = x ^ (x >> 16)
    x = x * np.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * np.uint32(0x846CA68B)
    return x ^ (x >> 16)


def hash_words(base: jax.Array, rows: int, n: int) -> jax.Array:
    """`[rows, n]` uint32 random words from two threefry words `base` (uint32 `[2]`): word `i` of
    row `r` is lowbias32(lowbias32(base[0] + (r·n + i)·φ) + base[1]), a Weyl sequence through
    Wellons's "lowbias32" integer hash (two rounds, ≈ 19 integer ops per word, instead of ~60
    for a threefry word), keyed a second time by `base[1]`.

    Within a call every (row, item) has its own counter (φ is odd, so the `rows·n < 2^32`
    counters are distinct mod 2^32) and every step is a bijection, so no word repeats another,
    nor is one row a shifted copy of another. `base` is fresh from `jax.random` at every call,
    so the stream is as reproducible and as independent across agents as the keys it comes
    from. The second key is what keeps calls apart: two calls' counter ranges overlap with
    probability about `2·rows·n / 2^32` (with one key, their words would then be shifted copies
    of each other); among the thousands of updates of many vmapped agents that happens (about
    4 pairs in a 30-agent run of 16 x 125-step updates), and the second hash makes two such
    calls' words unrelated unless their second words are equal too (2^-32)."""
    if base.shape != (2,) or base.dtype != jnp.uint32:
        raise ValueError(f"hash_words needs base = two uint32 words, shape (2,), got "
                         f"{base.dtype}{list(base.shape)}; draw them with "
                         f"jax.random.bits(key, (2,), jnp.uint32)")
    count = jnp.arange(rows * n, dtype=jnp.uint32).reshape(rows, n)
    return _lowbias32(_lowbias32(base[0] + count * _GOLDEN) + base[1])


def epsilon_greedy(q: jax.Array, bits: jax.Array, epsilon: jax.Array | float) -> jax.Array:
    """Actions `[N]` int32 for Q-values `q [N, A]` from two random words per row `bits [2, N]`
    uint32: with probability ε a uniformly random action, otherwise a maximal action chosen
    uniformly among ties. Both are picked by arithmetic that XLA fuses (no table lookup): the
    k-th legal choice with k = word mod count (bias below count / 2^32, under 1e-8).

    The ε test uses the top 24 bits of word 0: explore iff u < ε·2^24 (ε = 1 always explores,
    ε = 0 never); word 1 picks the action in either case."""
    num_actions = q.shape[-1]
    explore = (bits[0] >> 8).astype(jnp.int32) < jnp.asarray(epsilon * 16777216.0).astype(
        jnp.int32)
    if num_actions > _UNROLL_ACTIONS:
        is_max = q == jnp.max(q, axis=-1, keepdims=True)  # [N, A]
        # Explore: every action is a candidate; exploit: the maximal ones.
        cand = jnp.logical_or(is_max, explore[:, None])
        rank = jnp.cumsum(cand.astype(jnp.uint32), axis=-1)  # [N, A], rank of each candidate
        count = rank[:, -1]
        k = bits[1] % count + 1  # the k-th candidate, uniform over the candidates
        chosen = jnp.logical_and(cand, rank == k[:, None])
        return jnp.sum(jnp.where(chosen, jnp.arange(num_actions, dtype=jnp.int32), 0), axis=-1)
    # The same choice written per action: elementwise operations only (no reduction, no
    # cumulative sum), which XLA fuses into the step's other elementwise work.
    cols = [q[:, a] for a in range(num_actions)]
    q_max = _max_of(cols)
    cands = [jnp.logical_or(c == q_max, explore) for c in cols]
    ranks, total = [], jnp.zeros_like(bits[1])
    for c in cands:
        total = total + c.astype(jnp.uint32)
        ranks.append(total)
    k = bits[1] % total + 1
    action = jnp.zeros(q.shape[:-1], jnp.int32)
    for a in range(1, num_actions):
        action = jnp.where(jnp.logical_and(cands[a], ranks[a] == k), a, action)
    return action


# Up to this many actions the per-step arithmetic is written out action by action.
_UNROLL_ACTIONS = 16


def _max_of(cols: list[jax.Array]) -> jax.Array:
    out = cols[0]
    for c in cols[1:]:
        out = jnp.maximum(out, c)
    return out


@jax.custom_batching.custom_vmap
def take_rows(table: jax.Array, idx: jax.Array) -> jax.Array:
    """`table[idx]` (rows of a Q-table). Under `vmap` over agents it gathers from the agents'
    tables flattened into one, with offset indices: a plain 1-D row gather, where vmap's generic
    rule would build batched index arrays at every step."""
    return table[idx]


@take_rows.def_vmap
def _take_rows_vmap(axis_size: int, in_batched: Any, table: jax.Array,
                    idx: jax.Array) -> tuple[jax.Array, bool]:
    table, idx = with_batch_axis((table, idx), tuple(in_batched), axis_size)
    n = table.shape[1]
    offsets = (jnp.arange(axis_size, dtype=idx.dtype) * n).reshape((axis_size,)
                                                                  + (1,) * (idx.ndim - 1))
    return take_rows(table.reshape(axis_size * n, *table.shape[2:]), idx + offsets), True


@jax.custom_batching.custom_vmap
def set_entries(table: jax.Array, row: jax.Array, col: jax.Array,
                values: jax.Array) -> jax.Array:
    """`table.at[row, col].set(values)`; under `vmap` over agents, one scatter into the agents'
    tables flattened into one (see `take_rows`). Duplicate (row, col) pairs: one value wins."""
    return table.at[row, col].set(values, mode="promise_in_bounds")


@set_entries.def_vmap
def _set_entries_vmap(axis_size: int, in_batched: Any, table: jax.Array, row: jax.Array,
                      col: jax.Array, values: jax.Array) -> tuple[jax.Array, bool]:
    table, row, col, values = with_batch_axis((table, row, col, values), tuple(in_batched),
                                              axis_size)
    shape = table.shape
    offsets = (jnp.arange(axis_size, dtype=row.dtype) * shape[1]).reshape(
        (axis_size,) + (1,) * (row.ndim - 1))
    flat = set_entries(table.reshape(axis_size * shape[1], shape[2]), row + offsets, col, values)
    return flat.reshape(shape), True


def q_learning_update(q_table: jax.Array, obs: jax.Array, action: jax.Array, reward: jax.Array,
                      next_obs: jax.Array, terminated: jax.Array, hp: Any,
                      q_obs: jax.Array | None = None) -> jax.Array:
    """One synchronous Q-learning step for a batch of transitions (all `[N]`); `q_obs [N, A]`
    may pass the rows `q_table[obs]` already gathered."""
    if q_obs is None:
        q_obs = take_rows(q_table, obs)
    num_actions = q_obs.shape[-1]
    q_next = take_rows(q_table, next_obs)
    if num_actions > _UNROLL_ACTIONS:
        max_next = jnp.max(q_next, axis=-1)
        q_sa = jnp.sum(jnp.where(jnp.arange(num_actions) == action[:, None], q_obs, 0.0), -1)
    else:  # elementwise only (see `epsilon_greedy`); the same values
        max_next = _max_of([q_next[:, a] for a in range(num_actions)])
        q_sa = q_obs[:, 0]
        for a in range(1, num_actions):
            q_sa = jnp.where(action == a, q_obs[:, a], q_sa)
    bootstrap = jnp.where(terminated, 0.0, max_next)
    new = q_sa + hp.lr * (reward + hp.gamma * bootstrap - q_sa)
    return set_entries(q_table, obs, action, new)


def make_policy(env: Any, config: QLearningConfig) -> Policy:
    """Tabular acting: the agent is its Q-table `[num_states, num_actions]`; greedy is the
    lowest-index maximal action, sampling is ε-greedy with random tie-breaks (`epsilon_greedy`)
    with ε = `explore` (the training ε; `EVAL_EPSILON` when None). The noise is two random words
    per state, `[2, N]` uint32. Extras: the Q-values of the observed states, `q_obs [N, A]`."""
    num_states, num_actions = _check_spaces(env)

    def act(agent: Agent, obs: jax.Array, noise: jax.Array, deterministic: bool,
            mask: jax.Array | None = None, explore: Any = None) -> tuple[jax.Array, Any]:
        if mask is not None:
            raise ConfigError("qlearning does not handle legal-action masks")
        q_obs = take_rows(agent.params, obs.astype(jnp.int32))
        if deterministic:
            action = jnp.argmax(q_obs, axis=-1).astype(jnp.int32)
        else:
            action = epsilon_greedy(q_obs, noise, EVAL_EPSILON if explore is None else explore)
        return action, {"q_obs": q_obs}

    def noise(key: jax.Array, shape: tuple[int, ...]) -> jax.Array:
        return hash_words(jax.random.bits(key, (2,), jnp.uint32), 2, math.prod(shape))

    like = Agent(jax.ShapeDtypeStruct((num_states, num_actions), jnp.float32))
    return Policy(like, act, noise)


def greedy_policy(q_table: jax.Array) -> jax.Array:
    """The greedy action of every state `[num_states]` (lowest index among ties)."""
    return jnp.argmax(q_table, axis=-1).astype(jnp.int32)


def _uses_key(env: Any) -> bool:
    """Whether `env.step` reads its key (a deterministic environment's does not: its step keys
    are then never drawn)."""
    state, _ = jax.eval_shape(env.reset, jax.random.PRNGKey(0))
    action = jax.ShapeDtypeStruct((), jnp.int32)
    jaxpr = jax.make_jaxpr(env.step)(state, action, jax.random.PRNGKey(0)).jaxpr
    key_vars = jaxpr.invars[-len(jax.tree.leaves(jax.random.PRNGKey(0))):]
    _, used = pe.dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars))
    return any(used[jaxpr.invars.index(v)] for v in key_vars)


def _pack(obs: jax.Array, length: jax.Array, ret: jax.Array) -> jax.Array:
    """Observation (int32 `[N]`), episode length (int32 `[N]`) and running return (float32
    `[N]`, its bits) as one int32 array `[N, 3]`: one array for the step loop to write instead
    of three (see the step in `make_algorithm`); `_unpack` gives them back bit for bit."""
    return jnp.stack([obs, length, jax.lax.bitcast_convert_type(ret, jnp.int32)], axis=1)


def _unpack(packed: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    return (packed[:, 0], packed[:, 1],
            jax.lax.bitcast_convert_type(packed[:, 2], jnp.float32))


class QLearningEnvState(NamedTuple):
    """The batched environments of one agent, reset inline (see `make_algorithm`)."""

    env_state: Any  # the port's state, leading [num_envs]
    episode_return: jax.Array  # float32 [num_envs], running undiscounted return
    episode_length: jax.Array  # int32 [num_envs]


def make_algorithm(env: Any, config: QLearningConfig) -> Algorithm:
    """Tabular Q-learning on `env` (Discrete observations and actions); one member = one agent.

    The agent steps `num_envs` copies of `env` through the port (`env.reset`/`env.step` under
    `vmap`) and starts a new episode inline when one ends, with the semantics of rl-core's
    `AutoReset` + `EpisodeStatistics` (the update bootstraps from the true next state; the next
    action is chosen in the reset state) but without their per-step key splitting: each update
    draws two threefry words, spread over its steps and environments by `hash_words`, for the
    agent's ε-greedy choices and for the keys of the environments' resets; the environments'
    step keys come from one key split (unused, and so compiled away, when the environment is
    deterministic).
    """
    config.validate()
    num_states, num_actions = _check_spaces(env)
    _, ts_shape = jax.eval_shape(env.reset, jax.random.PRNGKey(0))
    if "action_mask" in ts_shape.info:
        raise ConfigError("qlearning does not handle legal-action masks (info['action_mask']); "
                          "pick an algorithm that does (`rl algos` lists them).")
    n_envs = config.num_envs
    policy = make_policy(env, config)
    reset_all = jax.vmap(env.reset)
    step_all = jax.vmap(env.step)
    env_step_uses_key = _uses_key(env)

    def init(key: jax.Array, hp: Any) -> RunnerState:
        k_env, k_run = jax.random.split(key)
        q_table = jnp.full((num_states, num_actions), hp.q_init, jnp.float32)
        env_state, ts = reset_all(jax.random.split(k_env, n_envs))
        envs = QLearningEnvState(env_state, jnp.zeros((n_envs,), jnp.float32),
                                 jnp.zeros((n_envs,), jnp.int32))
        ts = ts._replace(observation=ts.observation.astype(jnp.int32), info={})
        return RunnerState(TrainState(q_table, None, jnp.zeros((), jnp.int32)), envs, ts, k_run)

    def update(carry: RunnerState, hp: Any) -> tuple[RunnerState, dict[str, jax.Array]]:
        # Every random number of the update is drawn here, before the step loop: two threefry
        # words for the whole update, spread over its steps and environments by `hash_words`
        # (per step and environment: two words for the ε-greedy choice, two for the key of the
        # environment's reset), and the environments' step keys from one split (drawn only
        # when the environment reads them). The resets of all steps are computed here too
        # (where an episode ends, the step takes its environment's entry). Inside the loop a
        # step is then only table look-ups and arithmetic. (On the CPU a threefry call costs
        # about 10 ns per word, the hash about 1 ns: with one environment per agent, four
        # threefry words per step took half of an update's time.)
        key, k_words, k_env = jax.random.split(carry.key, 3)
        words = jax.random.bits(k_words, (2,), jnp.uint32)
        bits = jnp.swapaxes(hash_words(words, 4, config.num_steps * n_envs).reshape(
            4, config.num_steps, n_envs), 0, 1)  # [T, 4, n_envs]
        reset_keys = jax.random.wrap_key_data(jnp.swapaxes(bits[:, 2:], 1, 2),
                                              impl="threefry2x32")
        resets = jax.vmap(reset_all)(reset_keys)  # ([T, n_envs] states, time steps)
        env_keys = (jax.random.split(k_env, config.num_steps * n_envs).reshape(
            config.num_steps, n_envs, *k_env.shape) if env_step_uses_key else None)

        def step(c, xs):
            # The carry holds only what the next step reads, and as few arrays as possible:
            # on the CPU each array a step writes is a kernel of its own (plus a copy when the
            # old value is still read), so the observation, episode length and return travel
            # packed in one int32 array (`_pack`) and the three episode sums in one [3]. The
            # last step's time step (reward and flags, kept in the runner state) comes from
            # running the same step once more after the loop instead of being carried.
            q_table, env_state, packed, sums = c
            obs, length, ret = _unpack(packed)
            bits_t, (reset_state, rts), keys_t = xs
            action, extras = policy.act(Agent(q_table), obs, bits_t[:2], False, None, hp.epsilon)
            env_state, nts = step_all(env_state, action, keys_t)
            next_obs = nts.observation.astype(jnp.int32)
            q_table = q_learning_update(q_table, obs, action, nts.reward, next_obs,
                                        nts.terminated, hp, extras["q_obs"])
            ret = ret + nts.reward
            length = length + 1
            done = jnp.logical_or(nts.terminated, nts.truncated)
            sums = sums + jnp.stack([
                jnp.sum(jnp.where(done, ret, 0.0)),
                jnp.sum(jnp.where(done, length, 0)).astype(jnp.float32),
                jnp.sum(done).astype(jnp.float32),
            ])
            env_state = jax.tree.map(lambda r, s: jnp.where(
                done.reshape(done.shape + (1,) * (s.ndim - 1)), r, s), reset_state, env_state)
            # As AutoReset: the flags describe the step taken, the observation is the new
            # episode's first one where an episode ended.
            obs = jnp.where(done, rts.observation.astype(jnp.int32), next_obs)
            packed = _pack(obs, jnp.where(done, 0, length), jnp.where(done, 0.0, ret))
            return (q_table, env_state, packed, sums), nts

        xs = (bits, resets, env_keys)
        envs = carry.env_state
        c = (carry.train_state.params, envs.env_state,
             _pack(carry.timestep.observation, envs.episode_length, envs.episode_return),
             jnp.zeros((3,), jnp.float32))
        c, _ = jax.lax.scan(lambda c, x: (step(c, x)[0], None), c,
                            jax.tree.map(lambda x: x[:-1], xs), unroll=1)
        (q_table, env_state, packed, sums), nts = step(c, jax.tree.map(lambda x: x[-1], xs))
        obs, length, ret = _unpack(packed)
        envs = QLearningEnvState(env_state, ret, length)
        ts = nts._replace(observation=obs, info={})
        metrics = dict(zip(("episode_return_sum", "episode_length_sum", "episode_count"),
                           sums, strict=True))
        metrics = {**metrics, "q/mean": jnp.mean(q_table)}
        new_ts = TrainState(q_table, None, carry.train_state.step + 1)
        return RunnerState(new_ts, envs, ts, key, carry.extras), metrics

    return Algorithm(init, update, config.num_updates, config.batch_size,
                     lambda carry: Agent(carry.train_state.params), policy)


def make_train(env: Any, config: QLearningConfig) -> Callable[[jax.Array, Any], TrainResult]:
    """`train(key, hparams) -> TrainResult`, pure: `jax.jit(jax.vmap(train))` trains many agents."""
    return _make_train(make_algorithm(env, config))
