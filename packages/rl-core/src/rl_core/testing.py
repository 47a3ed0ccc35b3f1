"""`check_environment(env)`: the port's contract as one reusable check, run against every
registered environment. It raises `EnvironmentContractError` naming the first broken promise."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rl_core.spaces import Box, Discrete, MultiDiscrete
from rl_core.types import TimeStep
from rl_core.wrappers import AutoReset


class EnvironmentContractError(AssertionError):
    """An environment does not keep a promise of the port."""


def _require(cond: Any, msg: str) -> None:
    if not bool(cond):
        raise EnvironmentContractError(msg)


def _signature(tree: Any) -> Any:
    """The tree's structure and each leaf's shape and dtype, comparable with `==` (containers
    are not compared themselves: some define an `__eq__` over array contents)."""
    leaves, treedef = jax.tree.flatten(tree)
    return treedef, tuple((jnp.shape(x), jnp.result_type(x)) for x in leaves)


def check_environment(env: Any, num_steps: int = 64, seed: int = 0) -> None:
    """Checks, for an unbatched environment:
    * it has `reset`, `step`, `observation_space`, `action_space` of the known space types;
    * `reset`/`step` return `(state, TimeStep)`; reward float32 `[]`; flags bool `[]`;
    * observations lie in `observation_space` (shape, dtype, bounds) and are finite;
    * the TimeStep has the same structure, shapes and dtypes at reset and after a step (a scan
      carries it), and `step` keeps the state's structure (no recompilation);
    * it is pure: the same key gives the same result;
    * an `action_mask`, when present, is bool `[n]` with at least one legal action;
    * it runs under `jit` and `vmap`, and under `lax.scan` with `AutoReset` for `num_steps` steps
      (random legal actions), with terminated and truncated never both arising from nonsense
      dtypes.
    """
    for attr in ("reset", "step", "observation_space", "action_space"):
        _require(hasattr(env, attr), f"environment lacks `{attr}`")
    space = env.action_space
    _require(isinstance(space, Discrete | MultiDiscrete | Box),
             f"action_space must be Discrete, MultiDiscrete or Box, got {type(space).__name__}")

    key = jax.random.PRNGKey(seed)
    reset = jax.jit(env.reset)
    state, ts = reset(key)
    _require(isinstance(ts, TimeStep), f"reset must return (state, TimeStep), got {type(ts)}")
    _check_timestep(env, ts, "reset")
    _require(not bool(ts.terminated) and not bool(ts.truncated),
             "reset returned a finished episode")
    _require(float(ts.reward) == 0.0, f"reset reward must be 0, got {float(ts.reward)}")
    state2, ts2 = reset(key)
    _require(_tree_equal(ts, ts2) and _tree_equal(state, state2),
             "reset is not deterministic for a fixed key")

    def sample_action(k, ts):
        return space.sample(k, ts.info.get("action_mask"))

    step = jax.jit(env.step)
    a = sample_action(jax.random.PRNGKey(seed + 1), ts)
    _require(bool(space.contains(a)), "action_space.sample produced an action outside the space")
    k_step = jax.random.PRNGKey(seed + 2)
    nstate, nts = step(state, a, k_step)
    _check_timestep(env, nts, "step")
    _require(_signature(ts) == _signature(nts),
             f"TimeStep differs between reset and step:\n{_signature(ts)}\n{_signature(nts)}")
    _require(_signature(state) == _signature(nstate),
             "step changed the state's structure, shapes or dtypes (would recompile in a loop)")
    nstate2, nts2 = step(state, a, k_step)
    _require(_tree_equal(nts, nts2) and _tree_equal(nstate, nstate2),
             "step is not deterministic for fixed state, action and key")

    auto = AutoReset(env)

    def body(carry, k):
        s, t = carry
        k_a, k_s = jax.random.split(k)
        s, t = auto.step(s, sample_action(k_a, t), k_s)
        return (s, t), (t.reward, t.terminated, t.truncated, t.observation)

    @jax.jit
    def run(key):
        s, t = auto.reset(key)
        return jax.lax.scan(body, (s, t), jax.random.split(key, num_steps))

    (_, last), (rew, term, trunc, obs) = run(key)
    _require(np.all(np.isfinite(np.asarray(rew))), "non-finite reward during a random rollout")
    for leaf in jax.tree.leaves(obs):
        if jnp.issubdtype(leaf.dtype, jnp.floating):
            _require(np.all(np.isfinite(np.asarray(leaf))), "non-finite observation in a rollout")
    _check_timestep(env, jax.tree.map(lambda x: x, last), "scan")

    keys = jax.random.split(key, 3)
    vs, vts = jax.jit(jax.vmap(env.reset))(keys)
    _require(jnp.shape(vts.reward) == (3,), "reset does not vmap over keys")


def _tree_equal(a: Any, b: Any) -> bool:
    la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
    if len(la) != len(lb):
        return False
    return all(np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True)
               for x, y in zip(la, lb, strict=True))


def _check_timestep(env: Any, ts: TimeStep, where: str) -> None:
    _require(jnp.shape(ts.reward) == () and jnp.result_type(ts.reward) == jnp.float32,
             f"{where}: reward must be float32 [], got {jnp.result_type(ts.reward)} "
             f"{jnp.shape(ts.reward)}")
    for name in ("terminated", "truncated"):
        flag = getattr(ts, name)
        _require(jnp.shape(flag) == () and jnp.result_type(flag) == jnp.bool_,
                 f"{where}: {name} must be bool [], got {jnp.result_type(flag)} {jnp.shape(flag)}")
    _require(isinstance(ts.info, dict), f"{where}: info must be a dict")
    obs_space = env.observation_space
    if isinstance(obs_space, Box) or _is_box_tree(obs_space):
        # One Box, or a structured observation: a pytree of Boxes (one per part).
        spaces, treedef = jax.tree.flatten(obs_space, is_leaf=lambda s: isinstance(s, Box))
        parts, obs_treedef = jax.tree.flatten(ts.observation)
        _require(bool(obs_treedef == treedef),  # type: ignore[operator]
                 f"{where}: observation structure {obs_treedef} does not match "
                 f"observation_space's {treedef}")
        for space, obs in zip(spaces, parts, strict=True):
            _require(jnp.shape(obs) == space.shape,
                     f"{where}: observation shape {jnp.shape(obs)} != space {space.shape}")
            _require(jnp.result_type(obs) == jnp.dtype(space.dtype),
                     f"{where}: observation dtype {jnp.result_type(obs)} != space {space.dtype}")
            _require(bool(space.contains(obs)),
                     f"{where}: observation outside observation_space bounds")
    if "action_mask" in ts.info:
        mask = ts.info["action_mask"]
        space = env.action_space
        _require(isinstance(space, Discrete | MultiDiscrete),
                 "action_mask is only defined for Discrete and MultiDiscrete actions")
        size = space.n if isinstance(space, Discrete) else sum(space.nvec)
        _require(jnp.shape(mask) == (size,) and jnp.result_type(mask) == jnp.bool_,
                 f"{where}: action_mask must be bool [{size}], got {jnp.shape(mask)}")
        live = not (bool(ts.terminated) or bool(ts.truncated))
        if isinstance(space, Discrete):
            _require(bool(jnp.any(mask)) or not live,
                     f"{where}: action_mask has no legal action in a live state")
        else:  # MultiDiscrete: per-dimension masks concatenated, each needs a legal value
            offsets = np.cumsum([0, *space.nvec[:-1]])
            legal = [bool(jnp.any(mask[o:o + n])) for o, n in zip(offsets, space.nvec,
                                                                     strict=True)]
            _require(all(legal) or not live,
                     f"{where}: action_mask leaves a dimension with no legal value in a live "
                     f"state (legal per dimension: {legal})")


def _is_box_tree(space: Any) -> bool:
    leaves = jax.tree.leaves(space, is_leaf=lambda s: isinstance(s, Box))
    return not isinstance(space, Discrete | MultiDiscrete) and bool(leaves) and all(
        isinstance(s, Box) for s in leaves)
