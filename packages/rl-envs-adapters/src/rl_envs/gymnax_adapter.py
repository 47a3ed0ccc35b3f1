"""gymnax behind the port: gymnax's environments by name (`gymnax/CartPole-v1`), each a
`GymnaxInterface` (rl_envs.gymnax_interface, which says how episode ends map onto the port) with
gymnax's default parameters under the user's overrides, checked before anything traces them, and
gymnax's renderers for `rl render`."""

from __future__ import annotations

import importlib
import importlib.util
import math
import sys
import types
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rl_envs._registry import EnvError
from rl_envs.gymnax_interface import GymnaxInterface

LIBRARY = "gymnax"

# Family of each environment: it selects the algorithms' default hyperparameters (presets).
_FAMILIES = {
    "classic_control": [
        "CartPole-v1", "Pendulum-v1", "Acrobot-v1", "MountainCar-v0", "MountainCarContinuous-v0",
    ],
    "minatar": [
        "Asterix-MinAtar", "Breakout-MinAtar", "Freeway-MinAtar", "SpaceInvaders-MinAtar",
    ],
    "bsuite": [
        "Catch-bsuite", "DeepSea-bsuite", "MemoryChain-bsuite", "UmbrellaChain-bsuite",
        "DiscountingChain-bsuite", "SimpleBandit-bsuite",
    ],
    "misc": [
        "FourRooms-misc", "MetaMaze-misc", "PointRobot-misc", "BernoulliBandit-misc",
        "GaussianBandit-misc", "Reacher-misc", "Swimmer-misc", "Pong-misc", "FrozenLake-misc",
    ],
}
# gymnax registers these too, but they do not work with the pinned release (reason each):
EXCLUDED = {
    "MNISTBandit-bsuite": "in gymnax.registered_envs, but gymnax.make raises KeyError for it",
    "Seaquest-MinAtar": "in gymnax.registered_envs, but gymnax.make raises KeyError for it",
}
# These declare observation bounds that their own observations break (checked by
# check_environment); the adapter declares them unbounded instead.
_UNBOUNDED_OBS = {"MemoryChain-bsuite", "GaussianBandit-misc"}
ENV_NAMES: list[str] = [n for names in _FAMILIES.values() for n in names]
FAMILY: dict[str, str] = {n: fam for fam, names in _FAMILIES.items() for n in names}


# Imported by gymnax's environment modules at their top but used only in their `render` methods
# (Pong, Catch, the mazes, PointRobot): seaborn pulls pandas and scipy.stats, pyplot its backend
# machinery, together seconds of a run's start-up that a run never uses.
_RENDER_ONLY_MODULES = ("seaborn", "matplotlib.pyplot")


class _Deferred(types.ModuleType):
    """Stands in for the module `name` while gymnax is imported: the first use of one of its
    attributes (`plt.subplots`, `sns.color_palette`) imports the real module and every use is
    delegated to it, so gymnax's render code works unchanged. Dunder names (`__spec__`,
    `__path__`, `__file__`, which the import machinery and introspection probe) do not import:
    they are the stand-in's own (`__spec__` is None) or missing until the real module is loaded."""

    def __init__(self, name: str):
        super().__init__(name)
        object.__setattr__(self, "_real", None)

    def _load(self) -> types.ModuleType:
        real = object.__getattribute__(self, "_real")
        if real is None:
            if sys.modules.get(self.__name__) is self:  # still inside `_deferring`
                del sys.modules[self.__name__]
            real = importlib.import_module(self.__name__)
            object.__setattr__(self, "_real", real)
        return real

    def __getattr__(self, attr: str) -> Any:
        real = object.__getattribute__(self, "_real")
        if attr.startswith("__") and attr.endswith("__") and real is None:
            raise AttributeError(attr)
        return getattr(self._load(), attr)

    def __setattr__(self, attr: str, value: Any) -> None:
        if attr.startswith("__") and attr.endswith("__"):
            object.__setattr__(self, attr, value)
        else:
            setattr(self._load(), attr, value)

    def __dir__(self) -> list[str]:
        return dir(self._load())

    def __repr__(self) -> str:
        return f"<deferred module {self.__name__!r}>"


@contextmanager
def _deferring(names: Sequence[str]) -> Iterator[None]:
    """Puts a `_Deferred` stand-in in `sys.modules` for each module of `names` that is installed
    and not imported yet, and takes out those still there on leaving: modules imported inside
    get the stand-in, every later import the real module."""
    placed = {}
    for name in names:
        top = name.partition(".")[0]
        if name not in sys.modules and importlib.util.find_spec(top) is not None:
            placed[name] = sys.modules[name] = _Deferred(name)
    try:
        yield
    finally:
        for name, stand_in in placed.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]


def _import_gymnax() -> types.ModuleType:
    """gymnax, without importing the modules only its renderers use (`_RENDER_ONLY_MODULES`)."""
    if "gymnax" in sys.modules:
        return sys.modules["gymnax"]
    with _deferring(_RENDER_ONLY_MODULES):
        import gymnax
    return gymnax


INT32_MAX = 2**31 - 1


def _checked(name: str, default: Any, params: dict[str, Any]) -> dict[str, Any]:
    """`params` checked against the types of gymnax's defaults before anything traces them: an
    integer where the default is one (within int32, and at least 1 for a length or a count:
    `max_*`, `num_*`, `*_length`), a finite number where it is a float; an EnvError names the
    parameter, its default and what was given."""
    out = {}
    for key, value in params.items():
        was = getattr(default, key)
        fix = f"gymnax/{name}: {key} (default {was!r})"
        if isinstance(was, bool) or not isinstance(was, int | float):
            out[key] = value  # arrays and flags: gymnax's own business
            continue
        number = isinstance(value, int | float | np.integer | np.floating) and \
            not isinstance(value, bool)
        if not number or not math.isfinite(float(value)):
            kind = "an integer" if isinstance(was, int) else "a finite number"
            raise EnvError(f"{fix} must be {kind}, got {value!r}")
        if isinstance(was, int):
            if float(value) != int(value):
                raise EnvError(f"{fix} must be an integer, got {value!r}")
            counts = key.startswith(("max_", "num_")) or key.endswith("_length")
            low = 1 if counts else 0  # a length or a count is at least 1
            if not low <= int(value) <= INT32_MAX:  # gymnax counts steps in int32
                raise EnvError(f"{fix} must be between {low} and {INT32_MAX:,}, got {value!r}")
            out[key] = int(value)
        else:
            out[key] = float(value)
    return out


class GymnaxEnv(GymnaxInterface):
    """One gymnax environment with fixed `EnvParams` (keyword overrides at construction)."""

    def __init__(self, name: str, **params: Any):
        gymnax = _import_gymnax()

        self.name = name
        self.family = FAMILY[name]
        env, default = gymnax.make(name)
        fields = set(getattr(default, "__dataclass_fields__", {}))
        unknown = sorted(set(params) - fields)
        if unknown:
            raise EnvError(
                f"gymnax/{name} has no parameter {', '.join(map(repr, unknown))}; "
                f"it accepts: {', '.join(sorted(fields)) or 'none'}."
            )
        params = default.replace(**_checked(name, default, params)) if params else default
        super().__init__(env, params, f"gymnax/{name}", bounded=name not in _UNBOUNDED_OBS)

    # -- watching (`rl render`) ------------------------------------------------------------------

    render_suffix = ".gif"

    def render_episode(self, states: Sequence[Any], path: str) -> None:
        """An animated GIF of one episode's states, drawn as gymnax's own `Visualizer` draws
        them. Classic control and MinAtar frames are made as arrays (gymnasium's rgb-array
        renderer, one environment for the whole episode, with gymnax's own state and parameter
        mapping; MinAtar's channels coloured with the Visualizer's palette) and written by
        Pillow: a 500-step CartPole episode in seconds instead of the Visualizer's minute of
        matplotlib animation. The other renderable tasks go through the `Visualizer`."""
        if self.name not in _RENDERABLE:
            raise EnvError(f"gymnax has no renderer for {self.name}; it draws "
                           f"{', '.join(sorted(_RENDERABLE))}")
        from rl_envs._frames import save_gif

        if self.name in _GYM_DRAWN:
            return save_gif(self._gym_frames(states), path, fps=20)
        if self.name.endswith("-MinAtar"):
            return save_gif(self._minatar_frames(states), path, fps=20)
        self._visualize(states, path)

    def _gym_frames(self, states: Sequence[Any]) -> list[Any]:
        """Classic-control frames `[H, W, 3]` uint8 from gymnasium's rgb-array renderer (which
        needs pygame: the `render` extra)."""
        import os

        # pygame (gymnasium's renderer) draws off-screen here: no window, no sound, no banner.
        for var, value in (("SDL_VIDEODRIVER", "dummy"), ("SDL_AUDIODRIVER", "dummy"),
                           ("PYGAME_HIDE_SUPPORT_PROMPT", "1")):
            os.environ.setdefault(var, value)
        try:
            import gymnasium
            from gymnax.visualize.vis_gym import get_gym_state, set_gym_params
        except ImportError as e:
            raise EnvError(f"rendering gymnax/{self.name} needs {e.name}: install "
                           "`jaxrlkit-envs[render]`") from None
        env = gymnasium.make(self.name, render_mode="rgb_array")
        try:
            env.reset(seed=0)
            inner: Any = env.unwrapped
            set_gym_params(inner, self.name, self.params)
            frames = []
            for state in states:
                inner.state = get_gym_state(state, self.name)
                if self.name == "Pendulum-v1":
                    inner.last_u = np.asarray(state.last_u, dtype=np.float64)
                frames.append(env.render())
            return frames
        except ImportError as e:  # pygame, imported at the first render
            raise EnvError(f"rendering gymnax/{self.name} needs {e.name}: install "
                           "`jaxrlkit-envs[render]`") from None
        finally:
            env.close()

    def _minatar_frames(self, states: Sequence[Any], cell: int = 16) -> list[Any]:
        """MinAtar frames: each cell the colour of its highest channel in the Visualizer's
        palette (black, then seaborn's cubehelix over the channels), `cell` pixels wide."""
        import seaborn as sns

        stacked = jax.tree.map(lambda *x: jnp.stack(x), *states)
        obs = np.asarray(jax.jit(jax.vmap(
            lambda s: self._env.get_obs(s, self.params)))(stacked))  # [T, H, W, C]
        channels = obs.shape[-1]
        index = np.amax(obs * np.arange(1, channels + 1), axis=-1).astype(np.int64)  # [T, H, W]
        palette = np.array([(0.0, 0.0, 0.0), *sns.color_palette("cubehelix", channels)])
        rgb = (palette[index] * 255).astype(np.uint8)  # [T, H, W, 3]
        return list(rgb.repeat(cell, axis=1).repeat(cell, axis=2))

    def _visualize(self, states: Sequence[Any], path: str) -> None:
        """gymnax's own `Visualizer` (matplotlib's animation writer), for the tasks it draws
        with matplotlib alone (bsuite's Catch and the misc tasks)."""
        import matplotlib

        matplotlib.use("Agg")
        try:
            from gymnax.visualize import Visualizer
        except ImportError as e:
            raise EnvError(f"rendering gymnax/{self.name} needs {e.name}: install "
                           "`jaxrlkit-envs[render]`") from None
        Visualizer(self._env, self.params, list(states)).animate(str(path))

    def __repr__(self) -> str:
        return f"GymnaxEnv({self.name!r})"


# Classic control, drawn by gymnasium's renderer.
_GYM_DRAWN = frozenset({"Acrobot-v1", "CartPole-v1", "Pendulum-v1", "MountainCar-v0",
                        "MountainCarContinuous-v0"})
# What gymnax's Visualizer draws.
_RENDERABLE = frozenset({"Acrobot-v1", "CartPole-v1", "Pendulum-v1", "MountainCar-v0",
                         "MountainCarContinuous-v0", "Catch-bsuite", "Asterix-MinAtar",
                         "Breakout-MinAtar", "Freeway-MinAtar", "SpaceInvaders-MinAtar",
                         "Pong-misc", "PointRobot-misc", "MetaMaze-misc", "FourRooms-misc"})


def make(name: str, **kwargs: Any) -> GymnaxEnv:
    return GymnaxEnv(name, **kwargs)
