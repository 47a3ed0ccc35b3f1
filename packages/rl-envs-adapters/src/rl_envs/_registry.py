"""Which backends exist, which extra installs each, and how ids are resolved.

An id is `<backend>/<name>`. The backend prefix picks the adapter module, which is imported only
when that prefix is asked for, so a gymnax run never imports brax. Every adapter module exposes
`ENV_NAMES` and `FAMILY` (plain data, importable without its library) and `make(name, **kwargs)`.
The `native` backend holds environments written here in pure JAX (no library to install).
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
from dataclasses import dataclass
from types import ModuleType


class EnvError(ValueError):
    """A user-facing problem with an environment id or option; the message says how to fix it."""


class UnknownEnvironmentError(EnvError):
    pass


class MissingBackendError(EnvError):
    pass


@dataclass(frozen=True)
class Backend:
    prefix: str
    module: str  # adapter module, imported lazily
    library: str | None  # the import name of the environment library (None: built in)
    extra: str | None  # the extra of jaxrlkit-envs that installs it (None: built in)


BACKENDS: dict[str, Backend] = {
    "gymnax": Backend("gymnax", "rl_envs.gymnax_adapter", "gymnax", "gymnax"),
    "brax": Backend("brax", "rl_envs.brax_adapter", "brax", "brax"),
    "jumanji": Backend("jumanji", "rl_envs.jumanji_adapter", "jumanji", "jumanji"),
    "pgx": Backend("pgx", "rl_envs.pgx_adapter", "pgx", "pgx"),
    # Environments written here in pure JAX, needing no library.
    "native": Backend("native", "rl_envs.native", None, None),
}


def backend_installed(prefix: str) -> bool:
    library = BACKENDS[prefix].library
    return library is None or importlib.util.find_spec(library) is not None


def missing_extra_message(prefix: str) -> str:
    b = BACKENDS[prefix]
    return (
        f"the '{prefix}' backend needs the '{b.library}' library, which is not installed: "
        f"install it with `pip install 'jaxrlkit-envs[{b.extra}]'` "
        f"(or `uv sync --extra {b.extra}` in the workspace)."
    )


def adapter_module(prefix: str) -> ModuleType:
    return importlib.import_module(BACKENDS[prefix].module)


def all_ids() -> list[str]:
    """Every id of every backend, installed or not (adapter modules list names as plain data)."""
    return [f"{p}/{n}" for p in BACKENDS for n in adapter_module(p).ENV_NAMES]


def split_id(env_id: str) -> tuple[str, str]:
    """`"gymnax/CartPole-v1" -> ("gymnax", "CartPole-v1")`, or an error suggesting close ids."""
    prefix, sep, name = env_id.partition("/")
    if not sep or prefix not in BACKENDS:
        raise UnknownEnvironmentError(_unknown_message(env_id))
    if name not in adapter_module(prefix).ENV_NAMES:
        raise UnknownEnvironmentError(_unknown_message(env_id))
    return prefix, name


def _unknown_message(env_id: str) -> str:
    ids = all_ids()
    lowered = {i.lower(): i for i in ids}
    close = difflib.get_close_matches(env_id.lower(), list(lowered), n=3, cutoff=0.5)
    if not close:  # also try the bare name against names without prefix
        names = {i.split("/", 1)[1].lower(): i for i in ids}
        bare = env_id.split("/", 1)[-1].lower()
        close = [names[n].lower() for n in difflib.get_close_matches(bare, list(names), 3, 0.5)]
    hint = f" Did you mean {', '.join(repr(lowered[c]) for c in close)}?" if close else ""
    return (
        f"unknown environment '{env_id}'.{hint} "
        "Ids look like 'gymnax/CartPole-v1'; `rl envs` lists them all."
    )
