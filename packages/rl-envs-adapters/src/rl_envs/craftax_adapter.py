"""Craftax behind the port (Matthews et al., 2024; `craftax` 1.6): Craftax and Craftax-Classic,
symbolic and pixel observations.

    rl_envs.make("craftax/Craftax-Classic-Symbolic-v1")

The environments are Craftax's own without its auto-reset (`make_craftax_env_from_name(name,
auto_reset=False)`, default parameters; `max_steps=N` replaces the step limit). rl-core starts
the next episode and keeps the true final observation: with optimistic resets
(`OptimisticResetVectorEnv`: one fresh world per `reset_ratio` environments per step, 16 by
default, Craftax's own training setting) in the algorithms' stacks, or with a reset for every
environment at every step (`AutoReset`, 20-50 times slower here) with `reset_ratio=0`
(`rl run --env-arg reset_ratio=0`).

How Craftax's episode ends map onto the port (Craftax merges them into one `done`):
* death (health at zero), Classic's lava, Craftax's defeated final boss: `terminated`;
* the step limit (`max_timesteps`: 10,000 in Classic, 100,000 in Craftax): `truncated`, so a
  learner bootstraps from it; a step that hits the limit and ends the game otherwise is
  `terminated` (Craftax's own end test without the limit decides).

The reward is Craftax's: each achievement's first unlock (1 in Classic; 1, 3, 5 or 8 by
difficulty in Craftax) plus 0.1 per point of health gained or lost. `info["achievements"]`
(float32 `[A]`, 22 in Classic, 67 in Craftax) holds which achievements the episode has unlocked
so far (`achievement_names` names them, `achievement_rewards` gives each one's reward);
`max_achievement_return` is the return of unlocking all of them, the denominator of the
Craftax paper's "% of the maximum" score. Symbolic observations are Craftax's flat float32 vector;
pixel observations its `[H, W, 3]` image in [0, 1].

Compiling a Craftax step takes minutes on a CPU at XLA's default settings (docs/adapters-craftax.md
measures it).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rl_core import Box, Discrete, TimeStep
from rl_envs._registry import EnvError

LIBRARY = "craftax"

ENV_NAMES: list[str] = ["Craftax-Symbolic-v1", "Craftax-Pixels-v1",
                        "Craftax-Classic-Symbolic-v1", "Craftax-Classic-Pixels-v1"]
FAMILY: dict[str, str] = {n: "craftax_classic" if "Classic" in n else "craftax"
                          for n in ENV_NAMES}


def _quiet() -> contextlib.redirect_stdout:
    return contextlib.redirect_stdout(io.StringIO())


def _achievement_names(classic: bool) -> list[str]:
    if classic:
        from craftax.craftax_classic.constants import Achievement
    else:
        from craftax.craftax.constants import Achievement
    return [a.name.lower() for a in sorted(Achievement, key=lambda a: a.value)]


def _achievement_rewards(classic: bool) -> np.ndarray:
    if classic:
        from craftax.craftax_classic.constants import Achievement

        return np.ones(len(Achievement), np.float32)
    from craftax.craftax.constants import ACHIEVEMENT_REWARD_MAP

    return np.asarray(ACHIEVEMENT_REWARD_MAP, np.float32)


class CraftaxEnv:
    """One Craftax environment; see the module docstring."""

    def __init__(self, name: str, max_steps: int | None = None, reset_ratio: int = 16):
        if max_steps is not None and (isinstance(max_steps, bool)
                                      or not isinstance(max_steps, int) or max_steps < 1):
            raise EnvError(f"craftax/{name}: max_steps must be a positive integer, got "
                           f"{max_steps!r}.")
        if isinstance(reset_ratio, bool) or not isinstance(reset_ratio, int) or reset_ratio < 0:
            raise EnvError(f"craftax/{name}: reset_ratio must be an integer >= 0 (environments "
                           f"per fresh world each step; 0: a reset for every environment), got "
                           f"{reset_ratio!r}.")
        # A reset generates a world, the work of tens of steps: training stacks vectorise it
        # with `OptimisticResetVectorEnv` at this ratio (None: `AutoReset`).
        self.optimistic_reset_ratio = reset_ratio or None
        self.name = name
        self.family = FAMILY[name]
        with _quiet():  # Craftax reports loading its textures on stdout at import
            from craftax.craftax_env import make_craftax_env_from_name

            self._env = make_craftax_env_from_name(name, auto_reset=False)
        self._params = self._env.default_params
        if max_steps is not None:
            self._params = self._params.replace(max_timesteps=int(max_steps))
        space = self._env.observation_space(self._params)
        shape = tuple(int(d) for d in space.shape)
        self.observation_space = Box(0.0, 1.0, shape, jnp.float32)
        self._unlimited = self._params.replace(max_timesteps=np.iinfo(np.int32).max)
        self.action_space = Discrete(int(self._env.num_actions))
        self.max_steps = int(self._params.max_timesteps)
        classic = self.family == "craftax_classic"
        self.achievement_names = _achievement_names(classic)  # index k of info["achievements"]
        self.achievement_rewards = _achievement_rewards(classic)
        self.max_achievement_return = float(self.achievement_rewards.sum())

    def _timestep(self, obs: Any, state: Any, reward: Any, done: Any) -> TimeStep:
        done = jnp.asarray(done, jnp.bool_).reshape(())
        # Craftax's own end test with no step limit: death, lava, the boss
        ended = jnp.asarray(self._env.is_terminal(state, self._unlimited), jnp.bool_).reshape(())
        terminated = done & ended
        return TimeStep(
            observation=jnp.asarray(obs, jnp.float32),
            reward=jnp.asarray(reward, jnp.float32).reshape(()),
            terminated=terminated,
            truncated=done & ~terminated,
            info={"achievements": jnp.asarray(state.achievements, jnp.float32)},
        )

    def reset(self, key: jax.Array) -> tuple[Any, TimeStep]:
        obs, state = self._env.reset(key, self._params)
        return state, self._timestep(obs, state, 0.0, False)

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> tuple[Any, TimeStep]:
        obs, state, reward, done, _ = self._env.step(key, state, jnp.asarray(action, jnp.int32),
                                                     self._params)
        return state, self._timestep(obs, state, reward, done)

    render_suffix = ".gif"

    def render_episode(self, states: Sequence[Any], path: str) -> None:
        """An animated GIF of one episode drawn by Craftax's own pixel renderer (16-pixel
        blocks), compiled once for the episode."""
        from rl_envs._frames import save_gif

        if self.family == "craftax_classic":
            from craftax.craftax_classic.constants import BLOCK_PIXEL_SIZE_IMG
            from craftax.craftax_classic.renderer import make_craftax_pixel_renderer
        else:
            from craftax.craftax.constants import BLOCK_PIXEL_SIZE_IMG
            from craftax.craftax.renderer import make_craftax_pixel_renderer
        with _quiet():
            draw = jax.jit(make_craftax_pixel_renderer(BLOCK_PIXEL_SIZE_IMG))
        frames = [np.clip(np.asarray(draw(s)), 0, 255).astype(np.uint8) for s in states]
        save_gif(frames, path, fps=8)

    def __repr__(self) -> str:
        return f"CraftaxEnv({self.name!r})"


def make(name: str, **kwargs: Any) -> CraftaxEnv:
    return CraftaxEnv(name, **kwargs)
