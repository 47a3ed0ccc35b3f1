"""Wrappers written once against the port, for every backend.

A typical stack, innermost first:
    env -> EpisodeStatistics -> AutoReset -> VectorEnv(N) -> [FlattenObservation]
        -> [NormalizeObservation] -> [NormalizeReward] -> [ClipAction]
Wrappers below `VectorEnv` see one environment; those above see a leading `[N]` axis and treat it
as a batch (normalisation statistics are shared across the N environments).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rl_core.multiagent import episode_over
from rl_core.spaces import Box
from rl_core.types import STATE_INFO_KEYS, TimeStep


class Wrapper:
    """Delegates everything to the wrapped environment; subclasses override what they change."""

    def __init__(self, env: Any):
        self.env = env

    @property
    def observation_space(self) -> Any:
        return self.env.observation_space

    @property
    def action_space(self) -> Any:
        return self.env.action_space

    def reset(self, key: jax.Array) -> tuple[Any, TimeStep]:
        return self.env.reset(key)

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> tuple[Any, TimeStep]:
        return self.env.step(state, action, key)

    @property
    def step_key_shape(self) -> tuple[int, ...]:
        """Batch shape of keys that `step` also accepts already split (it always accepts one
        key): `()` unless a wrapper below splits its key. `rollout` splits the keys of every step
        of a rollout in one call, because on CPU each `jax.random.split` inside a step runs as a
        loop of tiny operations that costs more than the step's own arithmetic."""
        return tuple(getattr(self.env, "step_key_shape", ()))

    @property
    def unwrapped(self) -> Any:
        return getattr(self.env, "unwrapped", self.env)

    def inner_state(self, state: Any) -> Any:
        """The wrapped environment's state inside this wrapper's `state` (the same state for a
        wrapper that keeps none of its own)."""
        return state

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes this wrapper lacks (num_envs, backend metadata, ...).
        if name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.env!r})"


class TimeStepMap(Wrapper):
    """A wrapper that keeps the inner state and only rewrites what comes out: every `TimeStep`
    of `reset` and `step` goes through `map_timestep` (an observation transform, a reshaped
    batch, an added global state)."""

    def map_timestep(self, ts: TimeStep) -> TimeStep:
        raise NotImplementedError

    def reset(self, key: jax.Array) -> tuple[Any, TimeStep]:
        state, ts = self.env.reset(key)
        return state, self.map_timestep(ts)

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> tuple[Any, TimeStep]:
        state, ts = self.env.step(state, action, key)
        return state, self.map_timestep(ts)


class PresetReset(NamedTuple):
    """A step key that carries its environment's reset already computed (`rollout` with
    `precompute_resets=True`): `AutoReset.step` steps with `key[0]` and takes `state` and
    `timestep` (the wrapped environment's `reset(key[1])`) instead of computing the reset inside
    the step. Wrappers pass it down as they pass a key; `VectorEnv` maps over its leaves."""

    # Per environment (as `AutoReset` sees it); `rollout` builds it with leading [T, N] axes.
    key: jax.Array  # [2, ...] keys, AutoReset's split of one key: step, reset
    state: Any  # the reset state, the wrapped environment's leaves
    timestep: TimeStep  # the reset's time step (observation, info)


def key_batch_ndim(key: Any) -> int:
    """Axes of `key` beyond those of one key (a typed key is `[]`, a raw `PRNGKey` `uint32[2]`):
    0 for a single key, 1 for `[n]` keys, ... (of its `key` for a `PresetReset`)."""
    if isinstance(key, PresetReset):
        key = key.key
    typed = jax.dtypes.issubdtype(key.dtype, jax.dtypes.prng_key)
    return key.ndim - (0 if typed else 1)


def _select(pred: jax.Array, on_true: Any, on_false: Any) -> Any:
    """Leaf-wise `where` for an unbatched boolean scalar and two pytrees of the same structure."""
    return jax.tree.map(lambda a, b: jnp.where(pred, a, b), on_true, on_false)


class AutoReset(Wrapper):
    """Starts a new episode when one ends (`episode_over`: in a multi-agent environment when
    every agent is terminated or truncated), inside the same `step`.

    The returned observation is the first of the new episode; the real last observation is kept
    in `info["final_observation"]` (equal to `observation` when the episode goes on) so that a
    truncated episode can bootstrap from it. reward/terminated/truncated describe the step taken;
    entries of STATE_INFO_KEYS (the action mask) follow the new observation, and the last state's
    are kept as `info["final_<key>"]` (`final_action_mask`: the legal actions of the state a
    truncated episode bootstraps from).

    `step` takes one key (split here into a step key and a reset key) or that pair already split,
    `[2]` keys (see `Wrapper.step_key_shape`), or a `PresetReset` carrying the reset computed.
    """

    @property
    def step_key_shape(self) -> tuple[int, ...]:
        return (2,)

    def reset(self, key: jax.Array) -> tuple[Any, TimeStep]:
        state, ts = self.env.reset(key)
        info = {**ts.info, "final_observation": ts.observation}
        for k in STATE_INFO_KEYS:
            if k in ts.info:
                info[f"final_{k}"] = ts.info[k]
        return state, ts._replace(info=info)

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> tuple[Any, TimeStep]:
        if isinstance(key, PresetReset):
            state_st, ts = self.env.step(state, action, key.key[0])
            state_re, ts_re = key.state, key.timestep
        else:
            key_step, key_reset = key if key_batch_ndim(key) else jax.random.split(key)
            state_st, ts = self.env.step(state, action, key_step)
            state_re, ts_re = self.env.reset(key_reset)
        return start_next_episode(state_st, ts, state_re, ts_re)


def start_next_episode(state: Any, ts: TimeStep, state_re: Any, ts_re: TimeStep
                       ) -> tuple[Any, TimeStep]:
    """One environment's step `(state, ts)` with the episode restarted from the reset `(state_re,
    ts_re)` where it ended (`episode_over`): `AutoReset`'s step after both are computed. The
    observation and the STATE_INFO_KEYS entries become the reset's; the last ones are kept as
    `info["final_observation"]` and `info["final_<key>"]`."""
    done = episode_over(ts)  # every agent's flags, in a multi-agent environment
    info = {**ts.info, "final_observation": ts.observation}
    for k in STATE_INFO_KEYS:
        if k in ts.info:
            info[f"final_{k}"] = ts.info[k]
            info[k] = jnp.where(done, ts_re.info[k], ts.info[k])
    new_state = _select(done, state_re, state)
    obs = _select(done, ts_re.observation, ts.observation)
    return new_state, ts._replace(observation=obs, info=info)


class EpisodeStatsState(NamedTuple):
    env_state: Any
    episode_return: jax.Array
    episode_length: jax.Array


class EpisodeStatistics(Wrapper):
    """Adds the running undiscounted return and length of the current episode to `info`
    (`episode_return` float32, `episode_length` int32, counting the step just taken). On a step
    where `terminated | truncated` they are the finished episode's totals. Place it *inside*
    `AutoReset` so the counters restart with each episode."""

    def inner_state(self, state: EpisodeStatsState) -> Any:
        return state.env_state

    def reset(self, key: jax.Array) -> tuple[EpisodeStatsState, TimeStep]:
        state, ts = self.env.reset(key)
        # one return per agent in a multi-agent environment (reward [A])
        zero_r = jnp.zeros(jnp.shape(ts.reward), jnp.float32)
        zero_l = jnp.zeros((), jnp.int32)
        info = {**ts.info, "episode_return": zero_r, "episode_length": zero_l}
        return EpisodeStatsState(state, zero_r, zero_l), ts._replace(info=info)

    def step(
        self, state: EpisodeStatsState, action: jax.Array, key: jax.Array
    ) -> tuple[EpisodeStatsState, TimeStep]:
        env_state, ts = self.env.step(state.env_state, action, key)
        ret = state.episode_return + ts.reward.astype(jnp.float32)
        length = state.episode_length + 1
        info = {**ts.info, "episode_return": ret, "episode_length": length}
        return EpisodeStatsState(env_state, ret, length), ts._replace(info=info)


class VectorEnv(Wrapper):
    """`num_envs` independent copies stepped in lockstep with `vmap`; every leaf gets a leading
    `[num_envs]` axis. Spaces stay those of one environment. `step` takes one key (split here
    into one per environment) or keys already split to `step_key_shape`."""

    def __init__(self, env: Any, num_envs: int):
        super().__init__(env)
        if int(num_envs) < 1:
            raise ValueError(f"VectorEnv needs num_envs >= 1, got {num_envs}.")
        self.num_envs = int(num_envs)

    def reset(self, key: jax.Array) -> tuple[Any, TimeStep]:
        return jax.vmap(self.env.reset)(jax.random.split(key, self.num_envs))

    @property
    def step_key_shape(self) -> tuple[int, ...]:
        return (self.num_envs, *getattr(self.env, "step_key_shape", ()))

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> tuple[Any, TimeStep]:
        keys = key if key_batch_ndim(key) else jax.random.split(key, self.num_envs)
        return jax.vmap(self.env.step)(state, action, keys)


def batch_ndim(env: Any) -> int:
    """1 when the wrapped environment is vectorised (leading `[N]` axis), else 0."""
    return 1 if hasattr(env, "num_envs") else 0


class RunningMeanStd(NamedTuple):
    """Running mean/variance merged batch by batch (Chan et al.'s parallel algorithm)."""

    mean: jax.Array
    var: jax.Array
    count: jax.Array  # type: ignore[assignment]  # (shadows tuple.count, on purpose)

    @classmethod
    def create(cls, shape: tuple[int, ...]) -> RunningMeanStd:
        return cls(jnp.zeros(shape, jnp.float32), jnp.ones(shape, jnp.float32), jnp.float32(1e-4))

    def update(self, x: jax.Array, batch_ndim: int) -> RunningMeanStd:
        axes = tuple(range(batch_ndim))
        x = x.astype(jnp.float32)
        b_mean = jnp.mean(x, axis=axes) if axes else x
        b_var = jnp.var(x, axis=axes) if axes else jnp.zeros_like(x)
        b_count = jnp.float32(np.prod(x.shape[:batch_ndim]) if batch_ndim else 1)
        delta = b_mean - self.mean
        tot = self.count + b_count
        mean = self.mean + delta * b_count / tot
        m2 = self.var * self.count + b_var * b_count + delta**2 * self.count * b_count / tot
        return RunningMeanStd(mean, m2 / tot, tot)


def normalize_observation(stats: RunningMeanStd, obs: jax.Array, clip: float = 10.0,
                          epsilon: float = 1e-8) -> jax.Array:
    """`clip((obs - mean) / sqrt(var + epsilon), ±clip)` as float32: what `NormalizeObservation`
    feeds the agent, and what an agent saved with its statistics applies when it acts."""
    z = (obs - stats.mean) / jnp.sqrt(stats.var + epsilon)
    return jnp.clip(z, -clip, clip).astype(jnp.float32)


class NormalizeState(NamedTuple):
    env_state: Any
    stats: RunningMeanStd


class NormalizeObservation(Wrapper):
    """Standardises observations with running statistics (updated on every step, shared across a
    vectorised batch) and clips to `[-clip, clip]`. `info["final_observation"]` is normalised with
    the same statistics so bootstrapped values see what the network was trained on."""

    def __init__(self, env: Any, clip: float = 10.0, epsilon: float = 1e-8):
        super().__init__(env)
        self.clip, self.epsilon = float(clip), float(epsilon)
        self._bn = batch_ndim(env)

    def _norm(self, stats: RunningMeanStd, obs: jax.Array) -> jax.Array:
        return normalize_observation(stats, obs, self.clip, self.epsilon)

    def inner_state(self, state: NormalizeState) -> Any:
        return state.env_state

    def _apply(self, stats: RunningMeanStd, ts: TimeStep) -> TimeStep:
        info = dict(ts.info)
        if "final_observation" in info:
            info["final_observation"] = self._norm(stats, info["final_observation"])
        return ts._replace(observation=self._norm(stats, ts.observation), info=info)

    def reset(self, key: jax.Array) -> tuple[NormalizeState, TimeStep]:
        state, ts = self.env.reset(key)
        shape = ts.observation.shape[self._bn :]
        stats = RunningMeanStd.create(shape).update(ts.observation, self._bn)
        return NormalizeState(state, stats), self._apply(stats, ts)

    def step(self, state: NormalizeState, action: jax.Array, key: jax.Array):
        env_state, ts = self.env.step(state.env_state, action, key)
        stats = state.stats.update(ts.observation, self._bn)
        return NormalizeState(env_state, stats), self._apply(stats, ts)


class RewardNormState(NamedTuple):
    env_state: Any
    stats: RunningMeanStd
    discounted_return: jax.Array


class NormalizeReward(Wrapper):
    """Scales rewards by the running standard deviation of the discounted return (the scheme of
    OpenAI baselines' VecNormalize). The raw return stays available through EpisodeStatistics,
    which sits below this wrapper."""

    def __init__(self, env: Any, gamma: float = 0.99, clip: float = 10.0, epsilon: float = 1e-8):
        super().__init__(env)
        self.gamma, self.clip, self.epsilon = float(gamma), float(clip), float(epsilon)
        self._bn = batch_ndim(env)

    def inner_state(self, state: RewardNormState) -> Any:
        return state.env_state

    def reset(self, key: jax.Array) -> tuple[RewardNormState, TimeStep]:
        state, ts = self.env.reset(key)
        ret = jnp.zeros_like(ts.reward, dtype=jnp.float32)
        return RewardNormState(state, RunningMeanStd.create(()), ret), ts

    def step(self, state: RewardNormState, action: jax.Array, key: jax.Array):
        env_state, ts = self.env.step(state.env_state, action, key)
        done = jnp.logical_or(ts.terminated, ts.truncated)
        ret = state.discounted_return * self.gamma + ts.reward
        stats = state.stats.update(ret, self._bn)
        reward = jnp.clip(ts.reward / jnp.sqrt(stats.var + self.epsilon), -self.clip, self.clip)
        new_state = RewardNormState(env_state, stats, jnp.where(done, 0.0, ret))
        return new_state, ts._replace(reward=reward.astype(jnp.float32))


class ShapingState(NamedTuple):
    env_state: Any
    steps: jax.Array  # float32 []: steps this stack has taken, held at the horizon


class AnnealedRewardShaping(Wrapper):
    """Trains on `reward + c * info["shaped_reward"]` (the environment's shaping reward, shaped
    like the reward: Overcooked's), `c` falling linearly from 1 to 0 over this stack's first
    `horizon` steps, as JaxMARL's IPPO baselines anneal Overcooked's shaping away (Carroll et
    al., 2019). Put it above `VectorEnv` (a step of the stack steps every environment: a caller
    counting environment steps passes their number over `num_envs`) and above the episode
    statistics, which keep counting the environment's own reward. The count is in the state, so
    a checkpoint resumes the schedule where it stood. JaxMARL holds `c` for a whole update; here
    it falls with each step."""

    def __init__(self, env: Any, horizon: float):
        super().__init__(env)
        if not horizon > 0:
            raise ValueError(f"AnnealedRewardShaping needs a horizon > 0 steps, got {horizon}")
        self.horizon = float(horizon)

    def inner_state(self, state: ShapingState) -> Any:
        return state.env_state

    def reset(self, key: jax.Array) -> tuple[ShapingState, TimeStep]:
        state, ts = self.env.reset(key)
        return ShapingState(state, jnp.zeros((), jnp.float32)), ts

    def step(self, state: ShapingState, action: jax.Array, key: jax.Array
             ) -> tuple[ShapingState, TimeStep]:
        env_state, ts = self.env.step(state.env_state, action, key)
        c = 1.0 - state.steps / self.horizon
        reward = ts.reward + c * ts.info["shaped_reward"]
        steps = jnp.minimum(state.steps + 1.0, self.horizon)
        return ShapingState(env_state, steps), ts._replace(reward=reward.astype(jnp.float32))


class ClipAction(Wrapper):
    """Clips continuous actions into the `Box` bounds before stepping (a Gaussian policy samples
    outside them). Leaves discrete action spaces alone."""

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> tuple[Any, TimeStep]:
        space = self.action_space
        if isinstance(space, Box):
            action = jnp.clip(action, space.low, space.high)
        return self.env.step(state, action, key)


def find_state(env: Any, state: Any, cls: type) -> Any:
    """The state of the outermost wrapper of type `cls` in the stack `env`, from the stack's
    `state`, or None when there is no such wrapper (e.g. the running statistics of a
    `NormalizeObservation` inside a training carry's environment state)."""
    while isinstance(env, Wrapper):
        if isinstance(env, cls):
            return state
        state, env = env.inner_state(state), env.env
    return None
