"""A maze with walls, a time limit and legal-move masks, written directly to rl-core's port.

The layout is a grid of strings: `#` wall, `.` floor, `S` the start, `G` the goal. The agent sees
a one-hot vector of its cell (float32 `[rows·cols]`) and moves up, right, down or left
(`Discrete(4)`); a move into a wall is illegal, and `info["action_mask"]` (bool `[4]`) says which
moves are legal in every state, so masked algorithms never try one. Reaching the goal gives +1
and *terminates* the episode; every other step gives 0. After `max_steps` steps without reaching
it the episode is *truncated* (a time limit: the value of the state it stopped in is bootstrapped).
In the default layout the shortest path is 10 steps, and a random legal walk reaches the goal
within 50 steps in about one episode in nine: a sparse reward that exploration must find.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rl_core import Box, Discrete, TimeStep

LAYOUT = (
    "S.#...",
    "..#.#.",
    ".##.#.",
    "....#.",
    ".##...",
    "...#.G",
)
# (d_row, d_col) of the actions up, right, down, left.
MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))


class MazeState(NamedTuple):
    cell: jax.Array  # int32 [], row * cols + col
    time: jax.Array  # int32 [], steps taken in this episode


class Maze:
    """See the module docstring. `layout`: rows of `#.SG` (one `S`, one `G`), as a sequence of
    strings or one string with rows separated by `/` (the form `--env-arg layout=...` passes)."""

    # The family this environment belongs to (it picks algorithm presets; 'custom': none).
    family = "custom"
    render_suffix = ".gif"

    def __init__(self, layout: Sequence[str] | str = LAYOUT, max_steps: int = 50):
        rows = layout.split("/") if isinstance(layout, str) else list(layout)
        if not rows or len({len(r) for r in rows}) != 1 or set("".join(rows)) - set("#.SG"):
            raise ValueError("layout must be rows of equal length made of '#', '.', 'S' and 'G'")
        grid = "".join(rows)
        if grid.count("S") != 1 or grid.count("G") != 1:
            raise ValueError("layout must have exactly one start 'S' and one goal 'G'")
        if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
            raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
        self.layout, self.max_steps = tuple(rows), max_steps
        self.rows, self.cols = len(rows), len(rows[0])
        self.start, self.goal = grid.index("S"), grid.index("G")
        wall = np.array([c == "#" for c in grid])
        # next_cell[cell, action]: where a move leads (itself when illegal); legal[cell, action].
        nxt = np.zeros((self.rows * self.cols, 4), np.int32)
        legal = np.zeros((self.rows * self.cols, 4), bool)
        for cell in range(self.rows * self.cols):
            r, c = divmod(cell, self.cols)
            for a, (dr, dc) in enumerate(MOVES):
                rr, cc = r + dr, c + dc
                ok = 0 <= rr < self.rows and 0 <= cc < self.cols and not wall[rr * self.cols + cc]
                nxt[cell, a], legal[cell, a] = (rr * self.cols + cc, True) if ok else (cell, False)
        self.wall, self.next_cell, self.legal = wall, nxt, legal
        n = self.rows * self.cols
        self.observation_space = Box(np.float32(0), np.float32(1), (n,), jnp.float32)
        self.action_space = Discrete(4)

    def _timestep(self, cell: jax.Array, reward: jax.Array, terminated: jax.Array,
                  truncated: jax.Array) -> TimeStep:
        obs = jax.nn.one_hot(cell, self.rows * self.cols, dtype=jnp.float32)
        return TimeStep(obs, reward, terminated, truncated,
                        {"action_mask": jnp.asarray(self.legal)[cell]})

    def reset(self, key: jax.Array) -> tuple[MazeState, TimeStep]:
        del key  # one start cell
        cell = jnp.full((), self.start, jnp.int32)
        false = jnp.zeros((), jnp.bool_)
        return MazeState(cell, jnp.zeros((), jnp.int32)), self._timestep(
            cell, jnp.zeros((), jnp.float32), false, false)

    def step(self, state: MazeState, action: jax.Array,
             key: jax.Array) -> tuple[MazeState, TimeStep]:
        del key  # deterministic
        cell = jnp.asarray(self.next_cell)[state.cell, action]
        time = state.time + 1
        terminated = cell == self.goal
        truncated = jnp.logical_and(time >= self.max_steps, jnp.logical_not(terminated))
        return MazeState(cell, time), self._timestep(
            cell, terminated.astype(jnp.float32), terminated, truncated)

    def render_episode(self, states: Sequence[Any], path: str) -> None:
        """An animated GIF of the episode (`rl render`): walls dark, the goal green, the agent
        blue, 24 pixels a cell."""
        from rl_envs import save_gif

        base = np.full((self.rows * self.cols, 3), 235, np.uint8)
        base[self.wall] = (60, 60, 60)
        base[self.goal] = (90, 190, 90)
        frames = []
        for s in states:
            cells = base.copy()
            cells[int(s.cell)] = (40, 90, 220)
            image = cells.reshape(self.rows, self.cols, 3)
            frames.append(image.repeat(24, axis=0).repeat(24, axis=1))
        save_gif(frames, path, fps=8)

    def __repr__(self) -> str:
        return f"Maze({self.rows}x{self.cols}, max_steps={self.max_steps})"
