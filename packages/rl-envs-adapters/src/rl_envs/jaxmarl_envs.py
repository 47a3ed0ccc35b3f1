"""JaxMARL's environments as multi-agent port environments: the shared translation (`JaxMARLEnv`)
and the suites with more to say (MPE's, SMAX's and Overcooked's flags, `info` and renderers).
The mapping of each suite onto the port is the reference in `rl_envs/jaxmarl_adapter.py`'s
module docstring; the turn-based and general-sum games are in `rl_envs/jaxmarl_games.py`."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rl_core import Box, Discrete, TimeStep


@contextlib.contextmanager
def _silenced() -> Iterator[None]:
    """Output to the process's stdout and stderr discarded: importing jaxmarl prints which of
    its optional environments it found, through a `sys.stdout` that one of its imports resets to
    the terminal's (so `contextlib.redirect_stdout` alone misses it)."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            stream.flush()
    saved = os.dup(1), os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        for stream in (sys.__stdout__, sys.__stderr__):
            if stream is not None:
                stream.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)

def make_jaxmarl(name: str, family: str, **kwargs: Any) -> Any:
    """JaxMARL's own environment for our id `name` of family `family`, its import silenced."""
    if "jaxmarl" not in sys.modules:
        with _silenced():
            import jaxmarl  # noqa: F401
    import jaxmarl

    if family == "smax":
        from jaxmarl.environments.smax import map_name_to_scenario

        scenario = map_name_to_scenario(name.removeprefix("SMAX_"))
        return jaxmarl.make("HeuristicEnemySMAX", scenario=scenario, **kwargs)
    if family == "overcooked":
        from jaxmarl.environments.overcooked import overcooked_layouts

        return jaxmarl.make("overcooked", layout=overcooked_layouts[name.removeprefix(
            "Overcooked_")], **kwargs)
    return jaxmarl.make(name, **kwargs)

class JaxMARLEnv:
    """One JaxMARL environment as a multi-agent port environment; see the module docstring."""

    def __init__(self, name: str, family: str, **kwargs: Any):
        self.name = name
        self.family = family
        self._env = make_jaxmarl(name, family, **kwargs)
        self.agents = tuple(self._env.agents)
        self.num_agents = len(self.agents)
        self.obs_sizes = tuple(int(np.prod(self._env.observation_space(a).shape))
                               for a in self.agents)
        self.action_counts = tuple(int(self._env.action_space(a).n) for a in self.agents)
        width = max(self.obs_sizes)
        self.observation_space = Box(-np.inf, np.inf, (width,), jnp.float32)
        self.action_space = Discrete(max(self.action_counts))
        mask = np.arange(self.action_space.n)[None, :] < np.array(self.action_counts)[:, None]
        self._info = {} if mask.all() else {"action_mask": jnp.asarray(mask)}

    def _observation(self, obs: dict[str, jax.Array]) -> jax.Array:
        width = self.observation_space.shape[0]
        return jnp.stack([
            jnp.pad(jnp.ravel(obs[a]).astype(jnp.float32), (0, width - n))
            for a, n in zip(self.agents, self.obs_sizes, strict=True)])

    def _timestep(self, obs: Any, state: Any, rewards: Any, dones: Any) -> TimeStep:
        """The port's TimeStep from JaxMARL's dicts (`rewards` and `dones` None at reset)."""
        if dones is None:
            done = jnp.zeros((self.num_agents,), jnp.bool_)
        else:
            done = jnp.stack([jnp.asarray(dones[a], jnp.bool_) for a in self.agents])
        return TimeStep(
            observation=self._observation(obs), reward=self._reward(rewards),
            terminated=jnp.zeros((self.num_agents,), jnp.bool_), truncated=done,
            info=dict(self._info))

    def _reward(self, rewards: Any) -> jax.Array:
        if rewards is None:
            return jnp.zeros((self.num_agents,), jnp.float32)
        return jnp.stack([jnp.asarray(rewards[a], jnp.float32) for a in self.agents])

    def _with_step_info(self, ts: TimeStep, info: Any) -> TimeStep:
        """`ts` with what the environment's own step `info` adds to the port's (None at
        reset); nothing by default."""
        return ts

    def reset(self, key: jax.Array) -> tuple[Any, TimeStep]:
        obs, state = self._env.reset(key)
        return state, self._with_step_info(self._timestep(obs, state, None, None), None)

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> tuple[Any, TimeStep]:
        actions = {a: action[i] for i, a in enumerate(self.agents)}
        obs, state, rewards, dones, info = self._env.step_env(key, state, actions)
        return state, self._with_step_info(self._timestep(obs, state, rewards, dones), info)

    # -- watching (`rl render`): the suites with a renderer override these ------------------------

    render_suffix: str | None = None

    def __repr__(self) -> str:
        return f"JaxMARLEnv({self.name!r}, agents={self.num_agents})"


class MPEEnv(JaxMARLEnv):
    """A Multi-Agent Particle Environment; see the adapter's module docstring."""

    render_suffix = ".gif"

    def render_episode(self, states: Sequence[Any], path: str) -> None:
        """An animated GIF of one episode drawn by JaxMARL's own `MPEVisualizer` (agents and
        landmarks as its coloured circles, the step, and what speaking agents say), each frame
        drawn by matplotlib's Agg canvas and written by Pillow."""
        import matplotlib.pyplot as plt
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        from rl_envs._frames import save_gif

        with _silenced():  # the visualiser prints whether agents communicate
            from jaxmarl.environments.mpe import MPEVisualizer

            viz = MPEVisualizer(self._env, list(states))
        canvas = FigureCanvasAgg(viz.fig)
        frames = []
        try:
            for t in range(len(states)):
                viz.update(t)
                canvas.draw()
                frames.append(np.asarray(canvas.buffer_rgba())[..., :3].copy())
        finally:
            plt.close(viz.fig)
        save_gif(frames, path, fps=10)


class SMAXEnv(JaxMARLEnv):
    """SMAX against JaxMARL's heuristic enemy, the allies as the agents; see the module
    docstring for its flags and `info`."""

    def _timestep(self, obs: Any, state: Any, rewards: Any, dones: Any) -> TimeStep:
        a = self.num_agents
        units = state.state  # SMAX's own state inside the heuristic enemy's
        alive = units.unit_alive[:a]
        allies_out = ~jnp.any(alive)
        enemies_out = ~jnp.any(units.unit_alive[a:])
        over = jnp.asarray(False) if dones is None else jnp.asarray(dones["__all__"], jnp.bool_)
        decided = over & (allies_out | enemies_out)
        avail = self._env.get_avail_actions(state)
        world = jnp.ravel(obs["world_state"]).astype(jnp.float32)
        info = {
            "action_mask": jnp.stack([avail[n] for n in self.agents]).astype(jnp.bool_),
            "alive": alive,
            "global_state": jnp.broadcast_to(world, (a, world.shape[0])),
            "won": jnp.broadcast_to(decided & enemies_out & ~allies_out, (a,)),
        }
        return TimeStep(
            observation=self._observation(obs), reward=self._reward(rewards),
            terminated=~alive | decided, truncated=over & ~decided & alive, info=info)

    render_suffix = ".gif"

    def render_episode(self, states: Sequence[Any], path: str) -> None:
        """An animated GIF of one episode drawn by SMAX's own renderer (allies blue, enemies
        green, a unit under fire lighter, each unit's type letter), one frame per step: the
        renderer's frame as it rasterises it, from the units' positions and last attacks."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from rl_envs._frames import save_gif

        smax = self._env._env  # SMAX itself, both teams, inside the heuristic enemy's wrapper
        fig = Figure(figsize=(5, 5), dpi=80)  # square: the renderer reshapes its raster (w, h)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        frames = []
        for t, state in enumerate(states):
            units = jax.device_get(state.state)
            attacks = {a: int(units.prev_attack_actions[i]) for i, a in enumerate(smax.agents)}
            image = smax.init_render(ax, (None, units, attacks), 0, t)
            frames.append(np.asarray(image.get_array())[..., :3].copy())
        save_gif(frames, path, fps=4)

    def __repr__(self) -> str:
        return f"SMAXEnv({self.name!r}, allies={self.num_agents})"


class OvercookedEnv(JaxMARLEnv):
    """Overcooked's two cooks; see the module docstring for its reward and
    `info["shaped_reward"]`."""

    def _with_step_info(self, ts: TimeStep, info: Any) -> TimeStep:
        shaped = self._reward(None if info is None else info["shaped_reward"])  # [A], per cook
        return ts._replace(info={**ts.info, "shaped_reward": shaped})

    render_suffix = ".gif"

    def render_episode(self, states: Sequence[Any], path: str) -> None:
        """An animated GIF of one episode drawn by JaxMARL's `OvercookedVisualizer` (its tiles:
        counters, pots with their onions and timers, the cooks facing their way and what they
        carry), one frame per step."""
        from jaxmarl.viz.overcooked_visualizer import TILE_PIXELS, OvercookedVisualizer

        from rl_envs._frames import save_gif

        pad = int(self._env.agent_view_size) - 2  # the maze map's border around the kitchen
        frames = []
        for state in states:
            state = jax.device_get(state)
            grid = np.asarray(state.maze_map[pad:-pad, pad:-pad, :])
            frames.append(OvercookedVisualizer._render_grid(
                grid, tile_size=TILE_PIXELS, highlight_mask=None,
                agent_dir_idx=state.agent_dir_idx, agent_inv=state.agent_inv))
        save_gif(frames, path, fps=4)

    def __repr__(self) -> str:
        return f"OvercookedEnv({self.name!r})"
