"""Which backends exist, which extra installs each, and how ids are resolved.

An id is `<backend>/<name>`. The backend prefix picks the adapter module, which is imported only
when that prefix is asked for, so a gymnax run never imports brax. Every adapter module exposes
`ENV_NAMES` and `FAMILY` (plain data, importable without its library) and `make(name, **kwargs)`.
The `native` backend holds environments written here in pure JAX (no library to install).

Installed packages add backends through the entry-point group `jaxrlkit.envs`: the entry point's
name is the prefix, its value the module (or object) with the same three names, e.g.

    [project.entry-points."jaxrlkit.envs"]
    mylab = "mylab_envs"            # mylab/Maze-v0 -> mylab_envs.make("Maze-v0")

(`FAMILY` may be left out: its environments are then of the family 'custom').
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.util
import os
import re
import sys
import warnings
from dataclasses import dataclass
from typing import Any

ENTRY_POINT_GROUP = "jaxrlkit.envs"
# The family of an environment whose backend or factory does not name one: no algorithm has a
# preset for it, so it trains with the algorithm's defaults unless `--preset` picks one.
CUSTOM_FAMILY = "custom"


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
    plugin: str | None = None  # the installed package that registered it (entry point)


BACKENDS: dict[str, Backend] = {
    "gymnax": Backend("gymnax", "rl_envs.gymnax_adapter", "gymnax", "gymnax"),
    "brax": Backend("brax", "rl_envs.brax_adapter", "brax", "brax"),
    "jumanji": Backend("jumanji", "rl_envs.jumanji_adapter", "jumanji", "jumanji"),
    "pgx": Backend("pgx", "rl_envs.pgx_adapter", "pgx", "pgx"),
    "jaxmarl": Backend("jaxmarl", "rl_envs.jaxmarl_adapter", "jaxmarl", "jaxmarl"),
    "craftax": Backend("craftax", "rl_envs.craftax_adapter", "craftax", "craftax"),
    "xminigrid": Backend("xminigrid", "rl_envs.xminigrid_adapter", "xminigrid", "xminigrid"),
    # Environments written here in pure JAX, needing no library.
    "native": Backend("native", "rl_envs.native", None, None),
}


_PREFIX = re.compile(r"[a-z0-9][a-z0-9_-]*")


@functools.cache
def _plugins() -> dict[str, Backend]:
    """The backends that installed packages register (entry points of `ENTRY_POINT_GROUP`). A
    name that clashes with a built-in backend or is not a lower-case prefix is skipped with a
    warning naming the package, so one bad package does not hide every environment."""
    from importlib.metadata import entry_points

    out = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        package = ep.dist.name if ep.dist is not None else "an installed package"
        if ep.name in BACKENDS or ep.name in out or not _PREFIX.fullmatch(ep.name):
            warnings.warn(f"{package} registers the environment prefix {ep.name!r}, which is "
                          "taken or not a lower-case name; its environments are left out",
                          stacklevel=2)
            continue
        out[ep.name] = Backend(ep.name, ep.value, None, None, package)
    return out


def backends() -> dict[str, Backend]:
    """The built-in backends, then those registered by installed packages."""
    return {**BACKENDS, **_plugins()}


def backend_installed(prefix: str) -> bool:
    library = backends()[prefix].library
    return library is None or importlib.util.find_spec(library) is not None


def missing_extra_message(prefix: str) -> str:
    b = BACKENDS[prefix]
    return (
        f"the '{prefix}' backend needs the '{b.library}' library, which is not installed: "
        f"install it with `pip install 'jaxrlkit-envs[{b.extra}]'` "
        f"(or `uv sync --extra {b.extra}` in the workspace)."
    )


def adapter_module(prefix: str) -> Any:
    b = backends()[prefix]
    if b.plugin is None:
        return importlib.import_module(b.module)
    return load_object(b.module, f"the '{prefix}' environments of {b.plugin}")


# `package.module:attribute` (the attribute may be dotted: `module:Class.factory`).
IMPORT_PATH = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*")


def is_import_path(env_id: str) -> bool:
    return IMPORT_PATH.fullmatch(env_id) is not None


def load_object(path: str, what: str, from_cwd: bool = False) -> Any:
    """The object at `path` (`package.module` or `package.module:attribute`); with `from_cwd`,
    imported as `python -c` would, with the current directory first on `sys.path` (an `rl`
    command finds the `maze.py` beside it). Every failure is an EnvError naming `what` and the
    fix."""
    module_name, _, attribute = path.partition(":")
    if from_cwd and "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name is not None and not (module_name == e.name
                                       or module_name.startswith(e.name + ".")):
            raise EnvError(f"{what}: importing {module_name} failed: {e}") from None
        raise EnvError(f"{what}: no module named {e.name!r}: install the package that holds "
                       "it, or run from the folder that holds it (or put that folder on "
                       "PYTHONPATH)") from None
    except Exception as e:  # the module's own code failed: the user's to fix, one line
        raise EnvError(f"{what}: importing {module_name} raised {type(e).__name__}: "
                       f"{first_line(e)}") from None
    where = module_name
    for part in attribute.split(".") if attribute else []:
        if not hasattr(obj, part):
            values = {n: getattr(obj, n, None) for n in dir(obj) if not n.startswith("_")}
            names = sorted(n for n, v in values.items()
                           if callable(v) and not isinstance(v, type(os)))
            raise EnvError(f"{what}: {where} has no {part!r}; its callables are "
                           f"{', '.join(names[:12]) or 'none'}"
                           f"{', ...' if len(names) > 12 else ''}")
        where = f"{module_name}:{part}" if where == module_name else f"{where}.{part}"
        obj = getattr(obj, part)
    return obj


def first_line(error: BaseException) -> str:
    """An exception's message as one line (its first non-empty line, else its type)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return lines[0] if lines else type(error).__name__


def env_names(prefix: str) -> list[str]:
    """The names a backend's adapter module lists (`ENV_NAMES`); a registered package whose
    module does not list them is an EnvError naming it."""
    names = getattr(adapter_module(prefix), "ENV_NAMES", None)
    if names is None:
        raise EnvError(f"the '{prefix}' environments of {backends()[prefix].plugin}: its module "
                       "has no ENV_NAMES (the list of its environment names)")
    return list(names)


def all_ids() -> list[str]:
    """Every id of every backend, installed or not (adapter modules list names as plain data);
    a registered package that fails to load is left out with a warning."""
    return list_envs(installed_only=False)


def list_envs(backend: str | None = None, installed_only: bool = True) -> list[str]:
    """Every id that works, optionally for one backend; by default only installed backends."""
    known = backends()
    prefixes = [backend] if backend else list(known)
    out = []
    for p in prefixes:
        if p not in known:
            raise UnknownEnvironmentError(f"unknown backend '{p}'; known: {', '.join(known)}")
        if installed_only and not backend_installed(p):
            continue
        try:
            out += [f"{p}/{n}" for n in env_names(p)]
        except EnvError as e:
            if backend is not None or known[p].plugin is None:
                raise
            warnings.warn(str(e), stacklevel=2)  # one broken package hides only its own
    return out


def split_id(env_id: str) -> tuple[str, str]:
    """`"gymnax/CartPole-v1" -> ("gymnax", "CartPole-v1")`, or an error suggesting close ids."""
    prefix, sep, name = env_id.partition("/")
    if not sep or prefix not in backends():
        raise UnknownEnvironmentError(_unknown_message(env_id))
    if name not in env_names(prefix):
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
        "Ids look like 'gymnax/CartPole-v1' (`rl envs` lists them all), or name your own "
        "environment's factory as 'package.module:factory'."
    )
