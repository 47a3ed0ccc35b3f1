"""XLand-MiniGrid behind the port (Nikulin et al., 2024; `xminigrid` 0.9): the MiniGrid tasks and
XLand's rule-based worlds, one task per environment.

    rl_envs.make("xminigrid/MiniGrid-Empty-8x8")
    rl_envs.make("xminigrid/XLand-MiniGrid-R1-9x9", benchmark="trivial-21k", ruleset=0)

An XLand world needs a ruleset (the goal, the rules, the objects placed): `ruleset` (an index,
default 0) into `benchmark`, one of xminigrid's benchmarks (`trivial-21k`, `small-1m`,
`medium-1m`, `medium-3m`, `high-1m`, `high-3m`; default `trivial-21k`) or the path of a local
benchmark file. A named benchmark is read from xminigrid's data folder (`~/.xland_minigrid`,
or `$XLAND_MINIGRID_DATA`) and downloaded there by xminigrid on first use; where it cannot be,
the error names the file, its address and the folder to put it in. MiniGrid tasks take no
ruleset.

How xminigrid's steps map onto the port:
* a LAST step with discount 0 (the goal reached) is `terminated`; a LAST step with discount 1 (the
  step count reached `max_steps`) is `truncated` (never also `terminated`), so a learner
  bootstraps from it. xminigrid does not reset by itself; rl-core's `AutoReset` does, keeping the
  true final observation.
* the reward is xminigrid's: `1 - 0.9 * steps / max_steps` on reaching the goal, else 0.
* the observation is the agent's egocentric view, float32: by default each cell's tile and
  colour one-hot, `[V, V, 13 + 12]` in a Box(0, 1); with `one_hot=False` xminigrid's own
  `[V, V, 2]` (tile id, colour id), a Box bounded by the tile and colour counts. The ids are
  categories: a dense layer on one-hot cells embeds each of them (by cell, where xminigrid's own
  baseline shares one embedding and convolves), where a layer on the ids reads them as
  magnitudes (`tools/xland_learning.py`).
* actions: `Discrete(6)` (forward, turn right, turn left, pick up, put down, toggle); no mask.

`max_steps` (an episode's step limit) and `view_size` (odd, the view's side) override xminigrid's
defaults; `one_hot` (default true) chooses the view's encoding.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rl_core import Box, Discrete, TimeStep
from rl_envs._registry import EnvError

LIBRARY = "xminigrid"

# xminigrid 0.9.3's registered_environments() (a test checks the list against the library).
_XLAND = [f"XLand-MiniGrid-R{r}-{s}x{s}" for r, sizes in (
    (1, (9, 11, 13, 15, 17)), (2, (9, 11, 13, 15, 17)), (4, (9, 11, 13, 15, 17)),
    (6, (13, 17, 19)), (9, (16, 19, 25))) for s in sizes]
_MINIGRID = [
    "MiniGrid-BlockedUnlockPickUp", "MiniGrid-DoorKey-5x5", "MiniGrid-DoorKey-6x6",
    "MiniGrid-DoorKey-8x8", "MiniGrid-DoorKey-16x16", "MiniGrid-Empty-5x5", "MiniGrid-Empty-6x6",
    "MiniGrid-Empty-8x8", "MiniGrid-Empty-16x16", "MiniGrid-EmptyRandom-5x5",
    "MiniGrid-EmptyRandom-6x6", "MiniGrid-EmptyRandom-8x8", "MiniGrid-EmptyRandom-16x16",
    "MiniGrid-FourRooms", "MiniGrid-LockedRoom", "MiniGrid-MemoryS8", "MiniGrid-MemoryS16",
    "MiniGrid-MemoryS32", "MiniGrid-MemoryS64", "MiniGrid-MemoryS128", "MiniGrid-Playground",
    "MiniGrid-Unlock", "MiniGrid-UnlockPickUp",
]
ENV_NAMES: list[str] = _XLAND + _MINIGRID
FAMILY: dict[str, str] = {n: "xland" for n in _XLAND} | {n: "minigrid" for n in _MINIGRID}
DEFAULT_BENCHMARK = "trivial-21k"


def load_ruleset(name: str, benchmark: str, ruleset: Any) -> Any:
    """Ruleset number `ruleset` of `benchmark` (a named xminigrid benchmark or a local file), or
    an EnvError that says which file is missing and where to put it."""
    from xminigrid import benchmarks

    if isinstance(ruleset, bool) or not isinstance(ruleset, int | np.integer) or ruleset < 0:
        raise EnvError(f"xminigrid/{name}: ruleset must be a non-negative integer (an index "
                       f"into the benchmark), got {ruleset!r}.")
    named = benchmark in benchmarks.NAME2HFFILENAME
    if named:
        filename = benchmarks.NAME2HFFILENAME[benchmark]
        path = os.path.join(benchmarks.DATA_PATH, filename)
        present = os.path.exists(path)
        folder_existed = os.path.isdir(benchmarks.DATA_PATH)
        try:
            # xminigrid prints its download's progress; the port's errors are one line
            with contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                bench = benchmarks.load_benchmark(benchmark)
        except Exception as e:  # no network, a refused download, a damaged file
            if not present and os.path.exists(path):  # a download cut short
                os.remove(path)
            if not folder_existed and os.path.isdir(benchmarks.DATA_PATH):
                with contextlib.suppress(OSError):  # only when empty: it was made for this file
                    os.rmdir(benchmarks.DATA_PATH)
            url = f"https://huggingface.co/datasets/{benchmarks.HF_REPO_ID}/resolve/main/{filename}"
            if present:
                raise EnvError(
                    f"xminigrid/{name}: {path} is not a readable benchmark ({type(e).__name__}: "
                    f"{e}); delete it to have xminigrid download it again from {url}, or pass "
                    f"benchmark=/path/to/file.") from None
            raise EnvError(
                f"xminigrid/{name}: the benchmark {benchmark!r} could not be read from {path} "
                f"({type(e).__name__}: {e}); download {url} to that path (or set "
                f"XLAND_MINIGRID_DATA to the folder that holds {filename}), or pass "
                f"benchmark=/path/to/file.") from None
    elif os.path.isfile(str(benchmark)):
        try:
            bench = benchmarks.load_benchmark_from_path(str(benchmark))
        except Exception as e:
            raise EnvError(f"xminigrid/{name}: {benchmark} is not an xminigrid benchmark file "
                           f"({type(e).__name__}: {e}).") from None
    else:
        raise EnvError(f"xminigrid/{name}: benchmark must be one of "
                       f"{', '.join(benchmarks.NAME2HFFILENAME)} or the path of a benchmark "
                       f"file, got {benchmark!r}.")
    if ruleset >= bench.num_rulesets():
        raise EnvError(f"xminigrid/{name}: ruleset {ruleset} is past the benchmark's "
                       f"{bench.num_rulesets():,} rulesets (0 to {bench.num_rulesets() - 1}).")
    return bench.get_ruleset(int(ruleset))


class XMiniGridEnv:
    """One xminigrid task; see the module docstring."""

    def __init__(self, name: str, benchmark: str | None = None, ruleset: int | None = None,
                 max_steps: int | None = None, view_size: int | None = None,
                 one_hot: bool = True):
        import xminigrid

        self.name = name
        self.family = FAMILY[name]
        self._env, params = xminigrid.make(name)
        overrides = {}
        if max_steps is not None:
            if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
                raise EnvError(f"xminigrid/{name}: max_steps must be a positive integer, got "
                               f"{max_steps!r}.")
            overrides["max_steps"] = int(max_steps)
        if view_size is not None:
            if (isinstance(view_size, bool) or not isinstance(view_size, int) or view_size < 3
                    or view_size % 2 == 0):
                raise EnvError(f"xminigrid/{name}: view_size must be an odd integer >= 3, got "
                               f"{view_size!r}.")
            overrides["view_size"] = int(view_size)
        if not isinstance(one_hot, bool):
            raise EnvError(f"xminigrid/{name}: one_hot must be true or false, got {one_hot!r}.")
        if self.family == "xland":
            self.benchmark = DEFAULT_BENCHMARK if benchmark is None else str(benchmark)
            self.ruleset = 0 if ruleset is None else ruleset
            overrides["ruleset"] = load_ruleset(name, self.benchmark, self.ruleset)
        elif benchmark is not None or ruleset is not None:
            raise EnvError(f"xminigrid/{name} is a MiniGrid task: it takes no benchmark or "
                           "ruleset (those are for the XLand-MiniGrid-* worlds).")
        self.one_hot = one_hot
        self._params = params.replace(**overrides)
        self.observation_space, self.action_space = _spaces(self._env, self._params, one_hot)
        limit = self._params.max_steps  # every xminigrid task's default_params sets it
        assert limit is not None
        self.max_steps = int(limit)

    def _timestep(self, ts: Any) -> TimeStep:
        last = ts.step_type == 2  # xminigrid's StepType.LAST
        terminated = last & (ts.discount == 0.0)
        obs = ts.observation
        if self.one_hot:
            from xminigrid.core.constants import NUM_COLORS, NUM_TILES

            obs = jnp.concatenate([jax.nn.one_hot(obs[..., 0], NUM_TILES),
                                   jax.nn.one_hot(obs[..., 1], NUM_COLORS)], axis=-1)
        return TimeStep(
            observation=jnp.asarray(obs, jnp.float32),
            reward=jnp.asarray(ts.reward, jnp.float32).reshape(()),
            terminated=jnp.asarray(terminated, jnp.bool_).reshape(()),
            truncated=jnp.asarray(last & ~terminated, jnp.bool_).reshape(()),
            info={},
        )

    def reset(self, key: jax.Array) -> tuple[Any, TimeStep]:
        ts = self._env.reset(self._params, key)
        return ts, self._timestep(ts)

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> tuple[Any, TimeStep]:
        del key  # xminigrid's step is deterministic
        ts = self._env.step(self._params, state, jnp.asarray(action, jnp.int32))
        return ts, self._timestep(ts)

    render_suffix = ".gif"

    def render_episode(self, states: Sequence[Any], path: str) -> None:
        """An animated GIF of one episode, each frame xminigrid's own RGB rendering of the
        whole grid (the agent's view highlighted)."""
        from rl_envs._frames import save_gif

        frames = [np.asarray(self._env.render(self._params, s), np.uint8) for s in states]
        save_gif(frames, path, fps=5)

    def __repr__(self) -> str:
        return f"XMiniGridEnv({self.name!r})"


def _spaces(env: Any, params: Any, one_hot: bool = True) -> tuple[Box, Discrete]:
    """The view's Box (one-hot cells, or the two ids) and the actions."""
    from xminigrid.core.constants import NUM_COLORS, NUM_TILES

    shape = tuple(int(d) for d in env.observation_shape(params))
    if one_hot:
        shape = (*shape[:-1], NUM_TILES + NUM_COLORS)
        high = np.ones(shape, np.float32)
    else:
        high = np.broadcast_to(np.array([NUM_TILES - 1, NUM_COLORS - 1], np.float32), shape)
    return (Box(np.zeros(shape, np.float32), high, shape, jnp.float32),
            Discrete(int(env.num_actions(params))))


def spaces(name: str) -> tuple[Box, Discrete]:
    """The default spaces of task `name` without building it: an XLand world's do not depend on
    its ruleset, which may have to be downloaded (`rl envs` lists them all)."""
    import xminigrid

    return _spaces(*xminigrid.make(name))


def make(name: str, **kwargs: Any) -> XMiniGridEnv:
    return XMiniGridEnv(name, **kwargs)
