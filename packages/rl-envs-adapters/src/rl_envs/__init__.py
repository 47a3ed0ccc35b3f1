"""rl_envs: every supported JAX environment library behind the one rl-core port.

    env = rl_envs.make("gymnax/CartPole-v1")
    env = rl_envs.make("mylab.maze:make_maze", size=7)   # a user's own (rl_envs.custom)
    rl_envs.list_envs()          # ids whose backend is installed

Adapters are imported only when their prefix is asked for; a backend whose library is missing
raises `MissingBackendError` naming the extra to install. Installed packages add backends through
the `jaxrlkit.envs` entry points (rl_envs._registry); their environments, and those named by
`module:factory`, are checked against the port (`rl_core.check_environment`) when made.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from rl_envs._frames import save_gif
from rl_envs._registry import (
    BACKENDS,
    CUSTOM_FAMILY,
    ENTRY_POINT_GROUP,
    EnvError,
    MissingBackendError,
    UnknownEnvironmentError,
    adapter_module,
    all_ids,
    backend_installed,
    backends,
    first_line,
    is_import_path,
    list_envs,
    missing_extra_message,
    split_id,
)

# The keyword of `make` (and so of `rl run --env-arg`) that keeps only some entries of a vector
# observation, for every backend: `obs_keep="0,2"` is CartPole without its velocities.
OBS_KEEP = "obs_keep"


def make(env_id: str, **kwargs: Any) -> Any:
    """Builds one (unbatched) environment implementing the rl-core port. The keyword `obs_keep`
    (indices: `"0,2"`, `2` or `(0, 2)`) wraps it in `rl_core.MaskObservation`, which hides every
    other entry of its vector observation (a partially observed version of the task); the other
    keywords go to the backend's environment (or the factory of `package.module:factory`)."""
    from rl_envs import custom

    keep = kwargs.pop(OBS_KEEP, None)
    for key, value in kwargs.items():  # every backend: no NaN or infinity reaches a simulator
        if isinstance(value, float) and not math.isfinite(value):
            raise EnvError(f"{env_id}: {key} must be a finite number, got {value!r}")
    if is_import_path(env_id):
        env = custom.make_from_factory(env_id, **kwargs)
    else:
        env = _make_registered(env_id, kwargs)
    if keep is not None:
        env = _mask_observation(env_id, env, keep)
    try:
        env.env_id = env_id
    except (AttributeError, TypeError, dataclasses.FrozenInstanceError):
        pass  # a frozen environment (a frozen dataclass, an equinox module) keeps its own
    return env


def _make_registered(env_id: str, kwargs: dict[str, Any]) -> Any:
    """An id of a backend: built by its adapter (a plugin's environments also checked against
    the port)."""
    from rl_envs import custom

    prefix, name = split_id(env_id)
    if not backend_installed(prefix):
        raise MissingBackendError(missing_extra_message(prefix))
    plugin = backends()[prefix].plugin
    try:
        env = adapter_module(prefix).make(name, **kwargs)
    except TypeError as e:  # a parameter the environment does not take
        if "keyword argument" not in str(e):
            if plugin is None:
                raise
            raise EnvError(f"{env_id}: {plugin}'s make raised TypeError: "
                           f"{first_line(e)}") from None
        raise EnvError(f"{env_id} does not take the parameter(s) {', '.join(map(repr, kwargs))}"
                       f" ({e})") from None
    except EnvError:
        raise
    except Exception as e:
        if plugin is None:
            raise
        raise EnvError(f"{env_id}: {plugin}'s make raised {type(e).__name__}: "
                       f"{first_line(e)}") from None
    if plugin is not None:
        env = custom.as_port(env, env_id)
        custom.check(env, env_id)
    return env


def _mask_observation(env_id: str, env: Any, keep: Any) -> Any:
    from rl_core import MaskObservation

    try:
        if isinstance(keep, str):
            keep = [int(i) for i in keep.replace(" ", ",").split(",") if i]
        return MaskObservation(env, keep)
    except (TypeError, ValueError) as e:
        raise EnvError(f"{env_id}: {OBS_KEEP}={keep!r} must name entries of its observation "
                       f"{env.observation_space}, e.g. {OBS_KEEP}=0,2 ({e})") from None


def _adapter_hook(env_id: str, hook: str) -> tuple[Any | None, str]:
    """The optional `hook` of `env_id`'s adapter (None where the adapter does not define it, and
    for a user's `module:factory`) and the environment's name within its backend. A backend that
    is not installed is a `MissingBackendError` naming what to install."""
    if is_import_path(env_id):
        return None, ""
    prefix, name = split_id(env_id)
    if not backend_installed(prefix):
        raise MissingBackendError(missing_extra_message(prefix))
    return getattr(adapter_module(prefix), hook, None), name


def against(env_id: str, kwargs: dict[str, Any], opponent: str | None
            ) -> tuple[dict[str, Any], str] | None:
    """For a backend whose games have built-in opponents (its adapter defines `against`): the
    environment arguments, from a run's `kwargs`, of games judged against `opponent` (the
    adapter's default when None), and that opponent's name. None for every other backend; a
    backend that is not installed is a `MissingBackendError` naming what to install."""
    hook, _ = _adapter_hook(env_id, "against")
    return None if hook is None else hook(dict(kwargs), opponent)


def arena(env_id: str) -> Any | None:
    """For a backend whose two-player games can be played between any two players (its adapter
    defines `arena`): the game's match engine (e.g. `rl_envs.pgx_match.Arena`: its built-in
    players and `play`). None for every other backend; a backend that is not installed is a
    `MissingBackendError` naming what to install."""
    hook, name = _adapter_hook(env_id, "arena")
    return None if hook is None else hook(name)


def spaces(env_id: str) -> tuple[Any, Any]:
    """The observation and action spaces of `env_id` with its default arguments: from the
    adapter's `spaces` hook where it has one (its spaces need no data the constructor would
    fetch), else from the environment `make` builds."""
    hook, name = _adapter_hook(env_id, "spaces")
    if hook is not None:
        return hook(name)
    env = make(env_id)
    return env.observation_space, env.action_space


def agent_count(env_id: str) -> int | None:
    """How many agents `env_id` has (an environment of the multi-agent port), None for a
    single-agent one: from the adapter's `agent_count` hook where it has one (the adapters of
    multi-agent libraries do), else None."""
    hook, name = _adapter_hook(env_id, "agent_count")
    return None if hook is None else hook(name)


def family(env_id: str) -> str:
    """The environment family that selects default hyperparameters ('classic_control',
    'minatar', ...); 'custom' for a user's environment that names none."""
    from rl_envs import custom

    if is_import_path(env_id):
        return custom.factory_family(env_id)
    prefix, name = split_id(env_id)
    return getattr(adapter_module(prefix), "FAMILY", {}).get(name, CUSTOM_FAMILY)


__all__ = [
    "agent_count", "arena",
    "spaces",
    "BACKENDS", "CUSTOM_FAMILY", "ENTRY_POINT_GROUP", "OBS_KEEP", "EnvError",
    "MissingBackendError", "UnknownEnvironmentError", "against", "all_ids", "backend_installed",
    "backends", "family", "first_line", "is_import_path", "list_envs", "make", "save_gif",
]
