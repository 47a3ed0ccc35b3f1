"""JaxMARL behind the multi-agent port (Rutherford et al., 2023; `jaxmarl` 0.2): the Multi-Agent
Particle Environments with discrete actions, SMAX against its heuristic enemy, Overcooked,
Hanabi, Switch Riddle, Coin Game and STORM (see `rl_core.multiagent` for the port).

    env = rl_envs.make("jaxmarl/MPE_simple_spread_v3")   # env.num_agents == 3
    env = rl_envs.make("jaxmarl/SMAX_2s3z")              # 5 allies against 5 scripted enemies

Each leaf carries the agent axis in JaxMARL's `env.agents` order. How JaxMARL's steps map onto
the port:
* the environment is stepped with `step_env` (no auto-reset); rl-core's `AutoReset` resets when
  every agent is done, keeping the true final observation;
* MPE episodes end only on the step limit (JaxMARL's `max_steps`, 25: an episode has 26 steps),
  so every `done` is `truncated` (a learner bootstraps from it); `terminated` stays False;
* agents whose observations are shorter than the longest (the adversary of simple_adversary,
  the speaker of simple_speaker_listener) get theirs zero-padded at the end, and agents with
  fewer actions than the most get the extra actions masked: `info["action_mask"]` `[A, n]`
  marks each agent's own actions (a task whose agents all have every action has no mask: there
  is nothing to mask); `env.obs_sizes` and `env.action_counts` give each agent's real sizes;
* rewards are JaxMARL's per agent, `[A]` (a team's return is their sum).

SMAX (`SMAX_<scenario>`: JaxMARL's `HeuristicEnemySMAX` with its defaults, which are those of its
baselines' configs: the enemy attacks the closest unit, units see the enemies' last actions,
walls kill) keeps the learner's team, the allies, as the agents:
* a unit that dies is `terminated` from that step on (it stays in the batch, its only legal
  action the no-op); when the battle is decided (a side wiped out) every other ally is
  `terminated` too; at JaxMARL's step limit (`max_steps`, 100: at most 101 steps a battle,
  the limit checked before the step counts) the allies still alive are
  `truncated` (bootstrapped);
* `info["action_mask"]` is JaxMARL's `get_avail_actions` (move, stop, attack an enemy in range),
  `info["alive"]` which allies are alive, `info["global_state"]` JaxMARL's `world_state` (every
  unit's features, the same for each agent) for a centralised critic, and `info["won"]` (bool,
  every agent) marks the step on which the allies won: the enemies are all dead and an ally is
  alive; the win rate is the fraction of episodes ending on such a step;
* each ally's reward is the team's (JaxMARL's: each enemy's lost fraction of its own health,
  averaged over the enemies, plus 1 for the win), so the team return sums `A` copies of it:
  at most `2 * A` in a won battle.

Overcooked (`Overcooked_<layout>`, JaxMARL's `overcooked` on one of its five layouts): two cooks
in a kitchen, each observing the grid as `[H, W, 26]` feature planes, flattened:
* both agents are handed the team's reward, 20 for each soup delivered; an episode ends only on
  the step limit (`max_steps`, 400), so every `done` is `truncated`;
* `info["shaped_reward"]` `[A]` is JaxMARL's shaping, each cook's own (3 for an onion put in
  the pot or a dish picked up, 5 for a soup picked up): the reward its baselines add while they
  anneal it away (`rl_core.AnnealedRewardShaping`), never part of the reported return.

Hanabi (`hanabi`, JaxMARL's two-player game by default; `num_agents=` up to 5), turn-based:
* every agent acts each step, but only the current player's move counts: `info["action_mask"]`
  is JaxMARL's `get_legal_moves` (the current player's legal plays, discards and hints; for every
  other player only the no-op, the last action);
* the reward is the team's (the change in score, each agent a copy; losing the last life takes
  back every firework played); the game ends by its own rules (a full round after the last card
  is drawn, the last life lost, or every firework complete), so every `done` is `terminated`;
  there is no step limit.

Switch Riddle (`switch_riddle`, Foerster et al., 2016; 3 prisoners by default, `num_agents=`):
* each step one random prisoner is in the room, sees the bulb and may switch it or tell; the
  others' actions are ignored. Telling ends the episode as `terminated` for every agent (+1 to
  each if every prisoner has been in the room, -1 otherwise); JaxMARL's step limit
  (`4 * num_agents - 6` steps) ends it as `truncated`.

Coin Game (`coin_game`, Lerer and Peysakhovich, 2017, as LOLA's Foerster et al., 2018 play it):
two agents, general-sum, on a 3x3 torus; an episode is `num_outer_steps` (10) inner games of
`num_inner_steps` (10) steps each, ended only by that limit (`truncated`); `info
["inner_episode_done"]` `[A]` marks an inner game's last step, which JaxMARL pays 0 and whose
observation is already the next game's start.

STORM (`storm_np`, Khan et al., 2023: JaxMARL's n-player InTheMatrix; 2 agents by default,
`num_agents=`): agents collect red and blue coins on an 8x8 grid and play the matrix game their
inventories make when they meet (the prisoner's dilemma by default), each observing a 5x5 view
of 14 planes, flattened; 8 actions. An episode is `num_inner_steps` (152) steps, ended only by
that limit (`truncated`); JaxMARL restarts the grid itself on that step, so its observation is
already the next episode's start. Rewards are each agent's own (general-sum). JaxMARL's other
STORM ids (`storm`, `storm_2p`) hand back observations, rewards and flags in shapes of their
own and are not listed.

Not here yet: MABrax and the MPE tasks with continuous actions (simple_world_comm,
simple_facmac). `rl render` draws MPE, SMAX and Overcooked; the others have no renderer.
"""

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

LIBRARY = "jaxmarl"

ENV_NAMES: list[str] = [
    "MPE_simple_v3", "MPE_simple_spread_v3", "MPE_simple_speaker_listener_v4",
    "MPE_simple_adversary_v3", "MPE_simple_tag_v3", "MPE_simple_push_v3",
    "MPE_simple_crypto_v3", "MPE_simple_reference_v3",
]
# JaxMARL's scenarios with a fixed line-up (`smax_env.MAP_NAME_TO_SCENARIO`, less SMACv2's
# random ones).
SMAX_SCENARIOS: tuple[str, ...] = ("3m", "2s3z", "25m", "3s5z", "8m", "5m_vs_6m", "10m_vs_11m",
                                   "27m_vs_30m", "3s5z_vs_3s6z", "3s_vs_5z", "6h_vs_8z")
# JaxMARL's `overcooked_layouts`, the five of Carroll et al.'s (2019) Overcooked-AI.
OVERCOOKED_LAYOUTS: tuple[str, ...] = ("cramped_room", "asymm_advantages", "coord_ring",
                                       "forced_coord", "counter_circuit")
# JaxMARL's own ids, each its own family.
GAMES: tuple[str, ...] = ("hanabi", "switch_riddle", "coin_game", "storm_np")
MPE_NAMES = list(ENV_NAMES)
ENV_NAMES += [f"SMAX_{s}" for s in SMAX_SCENARIOS]
ENV_NAMES += [f"Overcooked_{s}" for s in OVERCOOKED_LAYOUTS]
ENV_NAMES += list(GAMES)
FAMILY: dict[str, str] = {n: "mpe" for n in MPE_NAMES} | {
    f"SMAX_{s}": "smax" for s in SMAX_SCENARIOS} | {
    f"Overcooked_{s}": "overcooked" for s in OVERCOOKED_LAYOUTS} | {
    g: "storm" if g == "storm_np" else g for g in GAMES}


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


def _make(name: str, **kwargs: Any) -> Any:
    if "jaxmarl" not in sys.modules:
        with _silenced():
            import jaxmarl  # noqa: F401
    import jaxmarl

    if FAMILY[name] == "smax":
        from jaxmarl.environments.smax import map_name_to_scenario

        scenario = map_name_to_scenario(name.removeprefix("SMAX_"))
        return jaxmarl.make("HeuristicEnemySMAX", scenario=scenario, **kwargs)
    if FAMILY[name] == "overcooked":
        from jaxmarl.environments.overcooked import overcooked_layouts

        return jaxmarl.make("overcooked", layout=overcooked_layouts[name.removeprefix(
            "Overcooked_")], **kwargs)
    return jaxmarl.make(name, **kwargs)


class JaxMARLEnv:
    """One JaxMARL environment as a multi-agent port environment; see the module docstring."""

    def __init__(self, name: str, **kwargs: Any):
        self.name = name
        self.family = FAMILY[name]
        self._env = _make(name, **kwargs)
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

    # -- watching (`rl render`) ------------------------------------------------------------------

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

    def __repr__(self) -> str:
        return f"JaxMARLEnv({self.name!r}, agents={self.num_agents})"


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


class HanabiEnv(JaxMARLEnv):
    """Hanabi, turn-based: the current player's legal moves as its mask, the others' only the
    no-op; the game's end `terminated`. See the module docstring."""

    render_suffix = None  # type: ignore[assignment]

    def _timestep(self, obs: Any, state: Any, rewards: Any, dones: Any) -> TimeStep:
        ts = super()._timestep(obs, state, rewards, dones)
        legal = self._env.get_legal_moves(state)
        mask = jnp.stack([legal[a] for a in self.agents]).astype(jnp.bool_)
        return ts._replace(terminated=ts.truncated, truncated=jnp.zeros_like(ts.truncated),
                           info={**ts.info, "action_mask": mask})

    def __repr__(self) -> str:
        return f"HanabiEnv(players={self.num_agents})"


class SwitchRiddleEnv(JaxMARLEnv):
    """Switch Riddle: telling `terminated`, the step limit `truncated` (JaxMARL's one `done`
    covers both; which it was is the acting prisoner's action). See the module docstring."""

    render_suffix = None  # type: ignore[assignment]
    TELL = 2  # JaxMARL's `game_actions["TELL"]`

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> tuple[Any, TimeStep]:
        told = action[state.agent_in_room] == self.TELL  # the prisoner in the room acts
        nstate, ts = super().step(state, action, key)
        over = ts.truncated
        return nstate, ts._replace(terminated=over & told, truncated=over & ~told)

    def __repr__(self) -> str:
        return f"SwitchRiddleEnv(prisoners={self.num_agents})"


class CoinGameEnv(JaxMARLEnv):
    """Coin Game: the outer episode's limit `truncated`; `info["inner_episode_done"]` `[A]`."""

    render_suffix = None  # type: ignore[assignment]

    def _with_step_info(self, ts: TimeStep, info: Any) -> TimeStep:
        inner = jnp.asarray(False) if info is None else info["inner_episode_done"]
        inner = jnp.broadcast_to(jnp.asarray(inner, jnp.bool_), (self.num_agents,))
        return ts._replace(info={**ts.info, "inner_episode_done": inner})

    def __repr__(self) -> str:
        return "CoinGameEnv()"


class StormEnv(JaxMARLEnv):
    """STORM's n-player InTheMatrix: agents named by index, the outer episode's limit
    `truncated`. See the module docstring."""

    render_suffix = None  # type: ignore[assignment]

    def _timestep(self, obs: Any, state: Any, rewards: Any, dones: Any) -> TimeStep:
        over = (jnp.asarray(False) if dones is None
                else jnp.asarray(dones["__all__"], jnp.bool_))  # its per-agent keys are names
        return super()._timestep(obs, state, rewards, None)._replace(
            truncated=jnp.broadcast_to(over, (self.num_agents,)))

    def __repr__(self) -> str:
        return f"StormEnv(agents={self.num_agents})"


def agent_count(name: str) -> int:
    """The number of agents of task `name` with its default arguments (`rl envs` lists it)."""
    return len(_make(name).agents)


def make(name: str, **kwargs: Any) -> JaxMARLEnv:
    cls = {"smax": SMAXEnv, "overcooked": OvercookedEnv, "hanabi": HanabiEnv,
           "switch_riddle": SwitchRiddleEnv, "coin_game": CoinGameEnv,
           "storm": StormEnv}.get(FAMILY[name], JaxMARLEnv)
    return cls(name, **kwargs)
