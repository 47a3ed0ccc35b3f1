"""A user's own environments gone wrong, in the ways the port's checks must explain in one line:
the factories the hostile-input table names with `--env hostile_envs:<factory>` (this folder is
on the tests' path)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from rl_example_maze.maze import Maze

NOT_CALLABLE = 3


def raises(**kwargs: Any) -> Any:
    raise RuntimeError("maze.txt not found")


def wrong_type(**kwargs: Any) -> Any:
    return {"reset": None, "step": None}


class _IntReward(Maze):
    """Rewards as int32: the port promises float32 `[]`."""

    def step(self, state, action, key):
        state, ts = super().step(state, action, key)
        return state, ts._replace(reward=ts.reward.astype(jnp.int32))


class _StepCrashes(Maze):
    """A step that fails when traced (a shape error in the user's code)."""

    def step(self, state, action, key):
        return super().step(state, jnp.zeros((3,)) + jnp.zeros((4,)), key)


def int_reward(**kwargs: Any) -> Maze:
    return _IntReward(**kwargs)


def step_crashes(**kwargs: Any) -> Maze:
    return _StepCrashes(**kwargs)
