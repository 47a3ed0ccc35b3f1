"""A user's own environment: `--env package.module:factory`, and the backends installed packages
register (`jaxrlkit.envs` entry points, rl_envs._registry).

The factory is called with the run's environment arguments (`--env-arg k=v`) and returns one of
* an environment of the rl-core port (`reset(key)`, `step(state, action, key)`,
  `observation_space`, `action_space`), used as it is;
* a gymnax-interface environment, with its `default_params`, or an `(env, params)` pair: put
  behind the port by `GymnaxInterface` (how gymnax's done maps onto terminated/truncated is said
  there);
* a class of either kind (called with the arguments, like any factory).
The environment is then checked against the port (`rl_core.check_environment`: spaces, shapes
and dtypes at reset and step, purity, jit/vmap/scan, legal-action masks) before anything trains
on it, and the first broken promise is an EnvError of one line: what the port expects, what the
environment gave. The family is the factory's `family` attribute (a class attribute when the
factory is the environment's class) if it has one: it picks the algorithms' presets; else
'custom', the algorithms' defaults.
"""

from __future__ import annotations

import functools
from typing import Any

from rl_envs._registry import CUSTOM_FAMILY, EnvError, first_line, load_object
from rl_envs.gymnax_interface import GymnaxInterface, is_gymnax_interface

PORT = ("reset", "step", "observation_space", "action_space")
# Where a user reads what the port asks of an environment.
GUIDE = "docs/custom-environments.md"


def load_factory(path: str) -> Any:
    factory = load_object(path, f"--env {path}", from_cwd=True)
    if not callable(factory):
        raise EnvError(f"--env {path}: that is an object of type {type(factory).__name__}, not a "
                       "callable; name a function or class that returns the environment")
    return factory


def make_from_factory(path: str, **kwargs: Any) -> Any:
    """The environment that the factory at `path` returns for `kwargs`, behind the port and
    checked against it."""
    factory = load_factory(path)
    try:
        made = factory(**kwargs)
    except TypeError as e:
        if "argument" in str(e) and kwargs:
            raise EnvError(f"--env {path}: the factory does not take "
                           f"{', '.join(map(repr, kwargs))} ({first_line(e)})") from None
        raise EnvError(f"--env {path}: the factory raised TypeError: {first_line(e)}") from None
    except EnvError:
        raise
    except Exception as e:  # the user's code failed: one line, theirs to fix
        raise EnvError(f"--env {path}: the factory raised {type(e).__name__}: "
                       f"{first_line(e)}") from None
    env = as_port(made, f"--env {path}")
    check(env, f"--env {path}")
    return env


def as_port(made: Any, label: str) -> Any:
    """`made` (what a factory returned) as an environment of the port, or an EnvError saying
    what the port expects and what was given."""
    if isinstance(made, tuple) and len(made) == 2 and is_gymnax_interface(made[0]):
        return _gymnax(made[0], made[1], label)
    if is_gymnax_interface(made):
        if not hasattr(made, "default_params"):
            raise EnvError(f"{label}: a gymnax-interface environment without `default_params`; "
                           "return an (env, params) pair")
        return _gymnax(made, made.default_params, label)
    missing = [name for name in PORT if not hasattr(made, name)]
    if missing:
        raise EnvError(
            f"{label}: the factory returned a {type(made).__name__}, which lacks "
            f"{', '.join(missing)}; it must return an environment of the rl-core port (reset(key), "
            "step(state, action, key), observation_space, action_space), a gymnax-interface "
            f"environment or an (env, params) pair (see {GUIDE})")
    return made


def _gymnax(env: Any, params: Any, label: str) -> GymnaxInterface:
    try:
        return GymnaxInterface(env, params, label)
    except EnvError:
        raise
    except Exception as e:
        raise EnvError(f"{label}: reading its spaces and first observation raised "
                       f"{type(e).__name__}: {first_line(e)}") from None


def check(env: Any, label: str) -> None:
    """`rl_core.check_environment` on `env`, its findings as one EnvError line (an exception the
    environment's own code raised while being checked included)."""
    from rl_core import EnvironmentContractError, check_environment

    try:
        check_environment(env, num_steps=16)
    except EnvironmentContractError as e:
        raise EnvError(f"{label} breaks the environment port: {' '.join(str(e).split())} "
                       f"(see {GUIDE})") from None
    except Exception as e:
        raise EnvError(f"{label}: checking it against the environment port, its code raised "
                       f"{type(e).__name__}: {first_line(e)} (see {GUIDE})") from None


@functools.cache
def factory_family(path: str) -> str:
    """The family of `--env path`, read without building it: the factory's `family`, else
    'custom'."""
    family = getattr(load_factory(path), "family", None)
    return family if isinstance(family, str) else CUSTOM_FAMILY
