"""rl_envs: every supported JAX environment library behind the one rl-core port.

    env = rl_envs.make("gymnax/CartPole-v1")
    rl_envs.list_envs()          # ids whose backend is installed

Adapters are imported only when their prefix is asked for; a backend whose library is missing
raises `MissingBackendError` naming the extra to install.
"""

from __future__ import annotations

from typing import Any

from rl_envs._registry import (
    BACKENDS,
    EnvError,
    MissingBackendError,
    UnknownEnvironmentError,
    adapter_module,
    all_ids,
    backend_installed,
    missing_extra_message,
    split_id,
)


def make(env_id: str, **kwargs: Any) -> Any:
    """Builds one (unbatched) environment implementing the rl-core port."""
    prefix, name = split_id(env_id)
    if not backend_installed(prefix):
        raise MissingBackendError(missing_extra_message(prefix))
    try:
        env = adapter_module(prefix).make(name, **kwargs)
    except TypeError as e:  # a parameter the environment does not take
        if "keyword argument" not in str(e):
            raise
        raise EnvError(f"{env_id} does not take the parameter(s) {', '.join(map(repr, kwargs))}"
                       f" ({e})") from None
    env.env_id = env_id
    return env


def list_envs(backend: str | None = None, installed_only: bool = True) -> list[str]:
    """Every id that works, optionally for one backend; by default only installed backends."""
    prefixes = [backend] if backend else list(BACKENDS)
    out = []
    for p in prefixes:
        if p not in BACKENDS:
            raise UnknownEnvironmentError(f"unknown backend '{p}'; known: {', '.join(BACKENDS)}")
        if installed_only and not backend_installed(p):
            continue
        out += [f"{p}/{n}" for n in adapter_module(p).ENV_NAMES]
    return out


def family(env_id: str) -> str:
    """The environment family that selects default hyperparameters ('classic_control',
    'minatar', ...)."""
    prefix, name = split_id(env_id)
    return adapter_module(prefix).FAMILY[name]


__all__ = [
    "BACKENDS", "EnvError", "MissingBackendError", "UnknownEnvironmentError", "all_ids",
    "backend_installed", "family", "list_envs", "make",
]
