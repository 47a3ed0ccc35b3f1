"""brax behind the port.

How brax's episode ends map onto the port:
* We step brax's bare environment classes (`brax.envs.get_environment`), never its
  `EpisodeWrapper`/`AutoResetWrapper`: brax's auto-reset restores the *first* state cached at
  reset (every episode of an environment starts the same way) and drops the terminal observation.
  rl-core's `AutoReset` draws a fresh start from a fresh key and keeps the true last observation in
  `info["final_observation"]`.
* `terminated` is brax's own float `done` (a fall: an unhealthy hopper, a pole past 0.2 rad, ...)
  turned into a bool (`done > 0.5`). Tasks that never fail (halfcheetah, reacher, pusher) are
  never terminated.
* `truncated` is the adapter's own time limit, `episode_length` steps (default 1000, brax's and
  Gymnasium's MuJoCo limit), counted in the adapter's state; it holds only when the same step did
  not also terminate, so the flags never both hold and a true terminal is never bootstrapped.
  This is exactly brax's `EpisodeWrapper` rule (its `info["truncation"] = 1 - done` on the limit
  step) without its float flags.
* brax's `metrics`/`info` stay inside the state (brax's `step` reads them); the TimeStep's
  `info` is empty, as at reset.

Compile once: brax builds some state leaves from Python floats, so after a step they are *weakly*
typed while reset's are not (`reward = 1.0`), and a jitted loop sees a different carry on its
second call and recompiles. Every state leaf is cast to the dtype of reset's (strong) leaf at
reset and after each step, so the state pytree is identical in structure, shapes and dtypes.

Keys: brax's environments and wrappers expect raw `uint32[2]` keys (`jax.random.PRNGKey`); a
typed key (`jax.random.key`) is converted with `jax.random.key_data`.

Physics backends ('generalized', 'positional', 'spring', 'mjx'): every environment accepts
`backend=...` where brax supports it. The default is per environment (`DEFAULT_BACKEND`):
'spring' where the environment sets a spring time step (fastest on a CPU), 'generalized' for
hopper and walker2d (which brax does not tune for spring) and for inverted_pendulum (where
'generalized' runs MuJoCo's own 0.04 s control step and agents learn the task reliably, 'spring'
not). docs/adapters-brax.md has the measured speeds and runs.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rl_core import Box, TimeStep
from rl_envs._registry import EnvError

LIBRARY = "brax"

BACKENDS = ("generalized", "positional", "spring", "mjx")
# Every registered environment runs under every backend. 'spring'/'positional' are tuned (a
# smaller time step, more frames) in all but hopper and walker2d, which run under them with the
# generalized time step. The default per environment is the fastest on a CPU among the backends
# brax tunes it for (measured: docs/adapters-brax.md, tools/bench_brax.py), except where learning
# says otherwise: on inverted_pendulum PPO's brax preset reached 1000 with 4 seeds of 4 in 2M
# steps under 'generalized' (63k steps/s) but a mean of 891 under 'spring', and TD3 never got past
# ~260 under 'spring' against 1000 for 4 seeds of 4 under 'generalized'.
DEFAULT_BACKEND: dict[str, str] = {
    "ant": "spring",
    "halfcheetah": "spring",
    "hopper": "generalized",
    "humanoid": "spring",
    "humanoidstandup": "spring",
    "inverted_pendulum": "generalized",
    "inverted_double_pendulum": "spring",
    "pusher": "spring",
    "reacher": "spring",
    "walker2d": "generalized",
}
# brax registers these too, but they are left out (reason each):
EXCLUDED = {
    "fast": "brax's own unit-test stub: no physics, Python-side call counters, zero observations",
    "swimmer": "its only backend, 'generalized', computes fluid forces with "
               "`jnp.clip(a_min=...)`, which jax 0.10 removed: step raises TypeError",
}
ENV_NAMES: list[str] = list(DEFAULT_BACKEND)
# One family for every brax task: it selects the algorithms' brax presets (many environments,
# short rollouts, normalised observations), falling back to 'continuous_control'.
FAMILY: dict[str, str] = {n: "brax" for n in ENV_NAMES}
DEFAULT_EPISODE_LENGTH = 1000


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Keeps brax's noise out of the user's output: importing `brax.envs` imports `mujoco.mjx`,
    which prints 'Failed to import warp' lines to stdout on machines without NVIDIA's warp
    (harmless: warp only serves the GPU 'mjx' implementation), and every model load warns that
    brax's pipelines are no longer actively maintained (we know; see docs/adapters-brax.md).

    MuJoCo's C library reports model warnings (brax's half_cheetah.xml and humanoid.xml use the
    deprecated `settotalmass`) by printing to stderr *and appending to MUJOCO_LOG.TXT in the
    working directory*; while brax loads a model they become Python warnings instead
    (`_mujoco_warning`), so no file appears in the user's directory."""
    import mujoco  # brax's own dependency

    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(_mujoco_warning)
    try:
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Brax System, piplines and environments")
            yield
    finally:
        mujoco.set_mju_user_warning(previous)


def _mujoco_warning(message: str) -> None:
    category = DeprecationWarning if "deprecated" in message else RuntimeWarning
    warnings.warn(f"MuJoCo: {message}", category, stacklevel=2)


def _import_brax_envs() -> Any:
    with _quiet():
        import brax.envs
    return brax.envs


def _raw_key(key: jax.Array) -> jax.Array:
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        return jax.random.key_data(key)
    return key


class BraxState(NamedTuple):
    """The adapter's state: brax's `State` (dtypes fixed to reset's) and the step count of the
    current episode (int32 `[]`), which decides truncation."""

    env_state: Any
    time: jax.Array


def _accepted_kwargs(cls: type) -> set[str]:
    from brax.envs.base import PipelineEnv

    names = {p for p in inspect.signature(cls).parameters if p != "kwargs"}
    names |= {p for p in inspect.signature(PipelineEnv).parameters if p not in ("sys", "backend")}
    return names


class BraxEnv:
    """One brax environment (`brax.envs.get_environment(name, backend=..., **kwargs)`) with the
    adapter's own time limit of `episode_length` steps."""

    def __init__(self, name: str, backend: str | None = None,
                 episode_length: int = DEFAULT_EPISODE_LENGTH, **kwargs: Any):
        envs = _import_brax_envs()
        self.name = name
        self.family = FAMILY[name]
        backend = DEFAULT_BACKEND[name] if backend is None else backend
        if backend not in BACKENDS:
            raise EnvError(
                f"brax/{name} does not support backend '{backend}'; pick one of "
                f"{', '.join(BACKENDS)} (default: {DEFAULT_BACKEND[name]})."
            )
        if isinstance(episode_length, bool) or not isinstance(episode_length, int | np.integer) \
                or episode_length < 1:
            raise EnvError(f"episode_length must be a positive integer, got {episode_length!r}.")
        cls = envs._envs[name]
        accepted = _accepted_kwargs(cls)
        unknown = sorted(set(kwargs) - accepted)
        if unknown:
            raise EnvError(
                f"brax/{name} has no parameter {', '.join(map(repr, unknown))}; it accepts: "
                f"backend, episode_length, {', '.join(sorted(accepted))}."
            )
        self.backend = backend
        self.episode_length = int(episode_length)
        with _quiet():
            self._env = envs.get_environment(name, backend=backend, **kwargs)
        key = jax.random.PRNGKey(0)
        spec = jax.eval_shape(self._env.reset, key)
        # Reset's dtypes, strong: the one signature the state keeps (see the module docstring).
        self._dtypes = jax.tree.map(lambda s: s.dtype, spec)
        step_spec = jax.eval_shape(self._env.step, spec,
                                   jax.ShapeDtypeStruct((self._env.action_size,), jnp.float32))
        same = str(jax.tree.structure(step_spec)) == str(jax.tree.structure(spec)) and all(
            a.shape == b.shape for a, b in zip(jax.tree.leaves(spec), jax.tree.leaves(step_spec),
                                               strict=True))
        if not same:
            raise EnvError(f"brax/{name}: step changes the state's structure or shapes; "
                           "the adapter cannot keep it in a compiled loop.")
        if not (isinstance(spec.obs, jax.ShapeDtypeStruct) and len(spec.obs.shape) == 1):
            raise EnvError(f"brax/{name}: only flat vector observations are supported, got "
                           f"{jax.tree.map(lambda s: s.shape, spec.obs)}.")
        self.observation_space = Box(-np.inf, np.inf, (int(spec.obs.shape[0]),), jnp.float32)
        self.action_space = Box(-1.0, 1.0, (int(self._env.action_size),), jnp.float32)

    def _fix_dtypes(self, state: Any) -> Any:
        return jax.tree.map(lambda x, d: jax.lax.convert_element_type(x, d), state, self._dtypes)

    render_suffix = ".html"

    def render_episode(self, states: Sequence[Any], path: str) -> None:
        """brax's own HTML viewer of one episode (`brax.io.html.render`); the page loads the
        viewer's script from brax's CDN when opened."""
        from brax.io import html

        pipeline = [s.env_state.pipeline_state for s in states]
        Path(path).write_text(html.render(self._env.sys, pipeline))

    def reset(self, key: jax.Array) -> tuple[BraxState, TimeStep]:
        state = self._fix_dtypes(self._env.reset(_raw_key(key)))
        return BraxState(state, jnp.zeros((), jnp.int32)), TimeStep(
            observation=jnp.asarray(state.obs, jnp.float32),
            reward=jnp.zeros((), jnp.float32),
            terminated=jnp.zeros((), jnp.bool_),
            truncated=jnp.zeros((), jnp.bool_),
            info={},
        )

    def step(self, state: BraxState, action: jax.Array, key: jax.Array) -> tuple[BraxState,
                                                                                 TimeStep]:
        del key  # brax's dynamics are deterministic given the state
        action = jnp.asarray(action, jnp.float32).reshape(self.action_space.shape)
        nstate = self._fix_dtypes(self._env.step(state.env_state, action))
        time = state.time + 1
        terminated = jnp.asarray(nstate.done, jnp.float32).reshape(()) > 0.5
        truncated = jnp.logical_and(time >= self.episode_length, jnp.logical_not(terminated))
        return BraxState(nstate, time), TimeStep(
            observation=jnp.asarray(nstate.obs, jnp.float32),
            reward=jnp.asarray(nstate.reward, jnp.float32).reshape(()),
            terminated=terminated,
            truncated=truncated,
            info={},
        )

    def __repr__(self) -> str:
        return f"BraxEnv({self.name!r}, backend={self.backend!r})"


def make(name: str, **kwargs: Any) -> BraxEnv:
    return BraxEnv(name, **kwargs)
