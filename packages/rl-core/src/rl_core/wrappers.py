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
    """Starts a new episode when one ends, inside the same `step`.

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
        done = jnp.logical_or(ts.terminated, ts.truncated)
        info = {**ts.info, "final_observation": ts.observation}
        for k in STATE_INFO_KEYS:
            if k in ts.info:
                info[f"final_{k}"] = ts.info[k]
                info[k] = jnp.where(done, ts_re.info[k], ts.info[k])
        new_state = _select(done, state_re, state_st)
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
        zero_r, zero_l = jnp.zeros((), jnp.float32), jnp.zeros((), jnp.int32)
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


def _batch_ndim(env: Any) -> int:
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
        self._bn = _batch_ndim(env)

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
        self._bn = _batch_ndim(env)

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


def flatten_observation(obs: Any, batch_ndim: int = 0) -> jax.Array:
    """Concatenates every leaf of an observation pytree into one float32 vector per batch element:
    `[*batch, D]`. Leaves are taken in pytree order (sorted keys for dicts, field order for
    NamedTuples), so the layout is deterministic."""
    leaves = jax.tree.leaves(obs)
    batch = leaves[0].shape[:batch_ndim]
    return jnp.concatenate(
        [jnp.reshape(x, (*batch, -1)).astype(jnp.float32) for x in leaves], axis=-1
    )


class ObservationTransform(Wrapper):
    """A wrapper that maps every observation (and `info["final_observation"]`) through
    `transform` and leaves everything else alone."""

    def transform(self, obs: Any) -> Any:
        raise NotImplementedError

    def _apply(self, ts: TimeStep) -> TimeStep:
        info = dict(ts.info)
        if "final_observation" in info:
            info["final_observation"] = self.transform(info["final_observation"])
        return ts._replace(observation=self.transform(ts.observation), info=info)

    def reset(self, key: jax.Array) -> tuple[Any, TimeStep]:
        state, ts = self.env.reset(key)
        return state, self._apply(ts)

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> tuple[Any, TimeStep]:
        state, ts = self.env.step(state, action, key)
        return state, self._apply(ts)


class FlattenObservation(ObservationTransform):
    """Turns any observation (an image, a nested NamedTuple) into a flat float32 vector, for MLPs.
    Networks that need the structure (a CNN over image planes) simply skip this wrapper."""

    def __init__(self, env: Any):
        super().__init__(env)
        self._bn = _batch_ndim(env)
        sizes = [int(np.prod(s.shape)) for s in jax.tree.leaves(
            env.observation_space, is_leaf=lambda s: hasattr(s, "shape"))]
        self._space = Box(-np.inf, np.inf, (sum(sizes),), jnp.float32)

    @property
    def observation_space(self) -> Box:
        return self._space

    def transform(self, obs: Any) -> jax.Array:
        return flatten_observation(obs, self._bn)


def _is_box(x: Any) -> bool:
    return isinstance(x, Box)


class FlattenStructuredObservation(ObservationTransform):
    """A structured observation (a dict / NamedTuple pytree of arrays, as Jumanji's are) as one
    float32 vector `[D]`, with a `Box` space that keeps every part's bounds, for one environment
    whose `observation_space` is the same pytree of `Box`es.

    Unlike `FlattenObservation` (which sits above `VectorEnv` and forgets bounds), it wraps the
    backend's environment itself, so every wrapper and algorithm above sees an ordinary `Box`
    observation. It remembers the layout: `unflatten(x)` takes `[..., D]` (any leading batch axes)
    back to the pytree of `[..., *part_shape]` arrays, so a network that needs an image-like part
    (a CNN over a grid) asks for it from the flat vector it is given; `layout` names each part's
    `(offset, shape)`. Parts are concatenated in pytree order (sorted keys for dicts, field order
    for NamedTuples). `info["final_observation"]`, when present, is flattened the same way.
    """

    def __init__(self, env: Any):
        super().__init__(env)
        parts, treedef = jax.tree.flatten(env.observation_space, is_leaf=_is_box)
        self._treedef: Any = treedef
        if not parts or not all(isinstance(s, Box) for s in parts):
            raise ValueError(
                "FlattenStructuredObservation needs an observation_space that is a pytree of Box "
                f"spaces (one per observation part), got {env.observation_space!r}")
        self._shapes = [tuple(s.shape) for s in parts]
        self._sizes = [int(np.prod(s, dtype=np.int64)) for s in self._shapes]
        self._offsets = [int(o) for o in np.cumsum([0, *self._sizes[:-1]])]
        low = np.concatenate([s.low.reshape(-1) for s in parts])
        high = np.concatenate([s.high.reshape(-1) for s in parts])
        self._space = Box(low, high, (sum(self._sizes),), jnp.float32)
        paths = jax.tree_util.tree_flatten_with_path(env.observation_space, is_leaf=_is_box)[0]
        self.layout: dict[str, tuple[int, tuple[int, ...]]] = {
            jax.tree_util.keystr(path, simple=True, separator="/"): (off, shape)
            for (path, _), off, shape in zip(paths, self._offsets, self._shapes, strict=True)
        }

    @property
    def observation_space(self) -> Box:
        return self._space

    def flatten(self, obs: Any) -> jax.Array:
        """Pytree of `[..., *part_shape]` -> float32 `[..., D]`."""
        leaves, treedef = jax.tree.flatten(obs)
        if treedef != self._treedef:
            raise ValueError(f"observation structure {treedef} differs from the observation "
                             f"space's {self._treedef}")
        batch = jnp.shape(leaves[0])[: jnp.ndim(leaves[0]) - len(self._shapes[0])]
        return jnp.concatenate(
            [jnp.reshape(x, (*batch, n)).astype(jnp.float32)
             for x, n in zip(leaves, self._sizes, strict=True)], axis=-1)

    def unflatten(self, flat: jax.Array) -> Any:
        """float32 `[..., D]` -> the observation pytree, each part `[..., *part_shape]`."""
        batch = flat.shape[:-1]
        parts = [jnp.reshape(flat[..., o:o + n], (*batch, *s))
                 for o, n, s in zip(self._offsets, self._sizes, self._shapes, strict=True)]
        return jax.tree.unflatten(self._treedef, parts)

    def transform(self, obs: Any) -> jax.Array:
        return self.flatten(obs)


class MaskObservation(ObservationTransform):
    """Hides part of a vector observation: only the entries at the indices `keep` of its last
    axis remain, in the order given (`MaskObservation(cartpole, keep=(0, 2))` sees the cart's
    position and the pole's angle but not their velocities, a partially observed task that needs
    memory). The `Box` space keeps those entries' bounds. It works below or above `VectorEnv`
    (the index is on the last axis), and masks `info["final_observation"]` the same way."""

    layout = None  # not the parts of a structured observation any more (see image_part)

    def __init__(self, env: Any, keep: Any):
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, Box) or len(space.shape) != 1:
            raise ValueError("MaskObservation needs a vector observation (a 1-D Box), got "
                             f"{space!r}")
        keep = tuple(int(i) for i in np.atleast_1d(np.asarray(keep)))
        d = int(space.shape[0])
        if not keep or any(not 0 <= i < d for i in keep) or len(set(keep)) != len(keep):
            raise ValueError(f"MaskObservation keeps distinct indices of the observation's {d} "
                             f"entries (0 to {d - 1}), got {keep}")
        self.keep = keep
        self._index = np.asarray(keep, np.int32)
        low = np.broadcast_to(np.asarray(space.low), space.shape)[self._index]
        high = np.broadcast_to(np.asarray(space.high), space.shape)[self._index]
        self._space = Box(low, high, (len(keep),), space.dtype)

    @property
    def observation_space(self) -> Box:
        return self._space

    def transform(self, obs: Any) -> jax.Array:
        return obs[..., self._index]

    def __repr__(self) -> str:
        return f"MaskObservation({self.env!r}, keep={self.keep})"
