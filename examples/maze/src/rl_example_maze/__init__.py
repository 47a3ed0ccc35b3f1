"""A maze for `rl`, registered through the `jaxrlkit.envs` entry point as the backend `mylab`.

The three names below are what `rl` reads from a backend module: the environment names
(`mylab/Maze-v0`), their family (no algorithm has a preset for 'custom': the algorithms'
defaults apply) and `make(name, **kwargs)`, which gets the run's `--env-arg`s.
"""

from __future__ import annotations

from typing import Any

from rl_example_maze.maze import Maze

ENV_NAMES: list[str] = ["Maze-v0"]
FAMILY: dict[str, str] = {"Maze-v0": "custom"}


def make(name: str, **kwargs: Any) -> Maze:
    if name != "Maze-v0":
        raise ValueError(f"mylab has no environment {name!r}; it has {ENV_NAMES}")
    return Maze(**kwargs)


__all__ = ["ENV_NAMES", "FAMILY", "Maze", "make"]
