"""Any environment written to gymnax's interface, behind the port.

gymnax's interface (`gymnax.environments.environment.Environment`) is what most community JAX
environments follow: `reset_env(key, params) -> (obs, state)`, `step_env(key, state, action,
params) -> (obs, state, reward, done, info)` without auto-reset, `observation_space(params)`,
`action_space(params)` and, from gymnax 1.0, `is_truncated(state, params)`. `GymnaxInterface`
puts one `(env, params)` pair behind the port; the gymnax adapter is this plus gymnax's names and
renderers, and `--env module:factory` uses it for a factory that returns such an environment.

How an episode's end maps onto the port:
* `step_env` is called (no auto-reset), leaving resets to rl-core's `AutoReset`, so the work is
  not done twice and the final observation is the one `step_env` returned.
* `terminated` is the environment's own `done`; `truncated` is `is_truncated` (a time limit) when
  the episode did not also terminate, so the two never both hold and a true terminal is never
  bootstrapped. An environment without `is_truncated` (gymnax before 1.0 merged the time limit
  into `done`) reports every end as a termination.
* the step's `info` is dropped: gymnax's (e.g. `discount`) repeats what `terminated` says and is
  absent at reset, whereas the port promises the same info keys at reset and step.
Observations are cast to float32 (MinAtar gives bool planes), rewards to float32. Spaces are read
by their attributes (`n`; `low`, `high`, `shape`), so gymnax's spaces and look-alikes both work.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rl_core import Box, Discrete, TimeStep
from rl_envs._registry import EnvError

# What an object needs to be taken for a gymnax-interface environment.
INTERFACE = ("reset_env", "step_env", "observation_space", "action_space")


def is_gymnax_interface(env: Any) -> bool:
    return all(callable(getattr(env, name, None)) for name in INTERFACE)


def action_space(space: Any, label: str) -> Discrete | Box:
    """A gymnax-style space -> the port's: `n` makes a Discrete, `low`/`high`/`shape` a Box."""
    if hasattr(space, "n") and not hasattr(space, "low"):
        return Discrete(int(space.n))
    if all(hasattr(space, a) for a in ("low", "high", "shape")):
        return Box(space.low, space.high, tuple(space.shape), jnp.float32)
    raise EnvError(f"{label}: its action space {type(space).__name__} is neither discrete (`n`) "
                   "nor a box (`low`, `high`, `shape`); the port takes only those")


def observation_space(space: Any, shape: tuple[int, ...], bounded: bool) -> Box:
    """Observations always become a float32 Box whose shape is that of a real reset, because
    some environments declare a space that differs from what they return (gymnax's FrozenLake
    declares Discrete(16) and returns the cell index). Bounds are kept when they fit the shape;
    `bounded=False` declares them infinite (for environments whose observations break them)."""
    low: Any = np.float32(-np.inf)
    high: Any = np.float32(np.inf)
    if bounded and hasattr(space, "n") and not hasattr(space, "low"):
        low, high = np.float32(0), np.float32(space.n - 1)
    elif bounded and hasattr(space, "low") and hasattr(space, "high"):
        lo, hi = np.asarray(space.low, np.float32), np.asarray(space.high, np.float32)
        if lo.shape in ((), shape) and hi.shape in ((), shape):
            low, high = lo, hi
    return Box(low, high, shape, jnp.float32)


def strong(state: Any) -> Any:
    """The state with every leaf strongly typed. Some gymnax environments build state leaves from
    Python floats (Pendulum's `last_u = 0.0` at reset): weakly typed there but not after a
    step, so a jitted loop would see a different carry on its second call and compile again."""
    return jax.tree.map(lambda x: jnp.asarray(x, jnp.result_type(x)), state)


class GymnaxInterface:
    """One gymnax-interface environment with fixed `params`, behind the port (see the module
    docstring). `label` names it in errors."""

    def __init__(self, env: Any, params: Any, label: str, bounded: bool = True):
        self._env, self.params, self.label = env, params, label
        obs_shape = jax.eval_shape(lambda k: env.reset_env(k, params)[0],
                                   jax.random.PRNGKey(0)).shape
        self.observation_space = observation_space(env.observation_space(params),
                                                   tuple(obs_shape), bounded)
        self.action_space = action_space(env.action_space(params), label)
        self._truncates = callable(getattr(env, "is_truncated", None))

    def reset(self, key: jax.Array) -> tuple[Any, TimeStep]:
        obs, state = self._env.reset_env(key, self.params)
        return strong(state), TimeStep(
            observation=jnp.asarray(obs, jnp.float32),
            reward=jnp.zeros((), jnp.float32),
            terminated=jnp.zeros((), jnp.bool_),
            truncated=jnp.zeros((), jnp.bool_),
            info={},
        )

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> tuple[Any, TimeStep]:
        obs, state, reward, done, _ = self._env.step_env(key, state, action, self.params)
        terminated = jnp.asarray(done, jnp.bool_).reshape(())
        truncated = jnp.zeros((), jnp.bool_)
        if self._truncates:
            truncated = jnp.logical_and(
                jnp.asarray(self._env.is_truncated(state, self.params), jnp.bool_).reshape(()),
                jnp.logical_not(terminated))
        return strong(state), TimeStep(
            observation=jnp.asarray(obs, jnp.float32),
            reward=jnp.asarray(reward, jnp.float32).reshape(()),
            terminated=terminated,
            truncated=truncated,
            info={},
        )

    def __repr__(self) -> str:
        return f"GymnaxInterface({self.label!r})"
