"""Environments written in pure JAX inside this package, needing no library: `native/<name>`.

GridWorld
---------
A `rows × cols` grid (default 5 × 5). Cells are numbered row-major, `cell = row·cols + col`; the
observation is that cell index (int32 scalar, `Discrete(rows·cols)` observation space), the form
tabular agents need. The goal is the bottom-right corner (the last cell) unless `goal` names
another cell. An episode starts in a uniformly random non-goal cell ("exploring starts", so every
cell is visited), or always in the cell `start` when one is given. A cell is given as `(row,
col)`, as the string `"row,col"` (the form `--env-arg start=7,11` passes) or as its index.

Actions (`Discrete(4)`): 0 up, 1 right, 2 down, 3 left; a move into the outer wall leaves the agent
where it is. Reward: −1 for every step, the one that reaches the goal included, so the return of
an episode is minus its length and maximising it means taking a shortest path (for any γ in (0,1]).
Reaching the goal *terminates* the episode; after `max_steps` steps (default 100) without reaching
it the episode is *truncated*.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rl_core import Discrete, TimeStep
from rl_envs._registry import EnvError

LIBRARY = None
ENV_NAMES: list[str] = ["GridWorld"]
FAMILY: dict[str, str] = {"GridWorld": "tabular"}

# (d_row, d_col) of the actions up, right, down, left.
MOVES = ((-1, 0), (0, 1), (1, 0), (0, -1))


class GridWorldState(NamedTuple):
    cell: jax.Array  # int32 []
    time: jax.Array  # int32 [], steps taken in this episode


class GridWorld:
    """See the module docstring."""

    def __init__(self, rows: int = 5, cols: int = 5, max_steps: int = 100,
                 start: Any = None, goal: Any = None):
        for name, v in (("rows", rows), ("cols", cols), ("max_steps", max_steps)):
            if not isinstance(v, int | np.integer) or isinstance(v, bool) or v < 1:
                raise EnvError(f"native/GridWorld: {name} must be a positive integer, got {v!r}")
        if rows * cols < 2:
            raise EnvError("native/GridWorld needs at least 2 cells (rows*cols >= 2)")
        self.name = "GridWorld"
        self.family = FAMILY["GridWorld"]
        self.rows, self.cols, self.max_steps = int(rows), int(cols), int(max_steps)
        self.num_cells = self.rows * self.cols
        self.goal = self.num_cells - 1 if goal is None else self._cell("goal", goal)
        self.start = None if start is None else self._cell("start", start)
        if self.start == self.goal:
            raise EnvError("native/GridWorld: start and goal must be different cells")
        self.observation_space = Discrete(self.num_cells)
        self.action_space = Discrete(4)
        # next_cell[s, a]: the deterministic transition table, built once with numpy.
        r, c = np.divmod(np.arange(self.num_cells), self.cols)
        table = np.stack([np.clip(r + dr, 0, self.rows - 1) * self.cols
                          + np.clip(c + dc, 0, self.cols - 1) for dr, dc in MOVES], axis=1)
        self.next_cell = np.asarray(table, np.int32)

    def _cell(self, name: str, value: Any) -> int:
        """A cell index from an index, a `(row, col)` pair or a `"row,col"` string."""
        if isinstance(value, str):
            parts = value.replace("(", "").replace(")", "").split(",")
            try:
                value = tuple(int(p) for p in parts) if len(parts) > 1 else int(parts[0])
            except ValueError:
                value = None
        if isinstance(value, int | np.integer) and not isinstance(value, bool):
            if 0 <= value < self.num_cells:
                return int(value)
        elif (isinstance(value, tuple | list) and len(value) == 2
              and all(isinstance(v, int | np.integer) and not isinstance(v, bool)
                      for v in value)):
            r, c = value
            if 0 <= r < self.rows and 0 <= c < self.cols:
                return int(r) * self.cols + int(c)
        raise EnvError(f"native/GridWorld: {name} must be a cell of the {self.rows}x{self.cols} "
                       f"grid, as 'row,col' (0-based) or a cell index, got {value!r}")

    def shortest_distance(self) -> np.ndarray:
        """Steps of a shortest path from every cell to the goal (the Manhattan distance)."""
        r, c = np.divmod(np.arange(self.num_cells), self.cols)
        goal_r, goal_c = divmod(self.goal, self.cols)
        return np.abs(goal_r - r) + np.abs(goal_c - c)

    def reset(self, key: jax.Array) -> tuple[GridWorldState, TimeStep]:
        if self.start is not None:
            cell = jnp.full((), self.start, jnp.int32)
        else:
            # One 32-bit draw reduced modulo the number of start cells (bias below cells / 2^32,
            # under 1e-8 for any practical grid): half the random-number work of `randint`;
            # the draws at or past the goal move up one cell, skipping it.
            cell = (jax.random.bits(key, (), jnp.uint32)
                    % np.uint32(self.num_cells - 1)).astype(jnp.int32)
            if self.goal != self.num_cells - 1:
                cell = cell + (cell >= self.goal).astype(jnp.int32)
        state = GridWorldState(cell, jnp.zeros((), jnp.int32))
        return state, TimeStep(cell, jnp.zeros((), jnp.float32), jnp.zeros((), jnp.bool_),
                               jnp.zeros((), jnp.bool_), {})

    def step(self, state: GridWorldState, action: jax.Array,
             key: jax.Array) -> tuple[GridWorldState, TimeStep]:
        del key  # deterministic
        cell = jnp.asarray(self.next_cell)[state.cell, action]
        time = state.time + 1
        terminated = cell == self.goal
        truncated = jnp.logical_and(time >= self.max_steps, jnp.logical_not(terminated))
        return GridWorldState(cell, time), TimeStep(
            cell, jnp.full((), -1.0, jnp.float32), terminated, truncated, {})

    render_suffix = ".png"

    def render_episode(self, states: Sequence[Any], path: str) -> None:
        """A picture of the grid with the episode's path from its start (circle) to where it
        ended, the goal marked (matplotlib)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        cells = np.array([int(s.cell) for s in states])
        rows, cols = np.divmod(cells, self.cols)
        fig, ax = plt.subplots(figsize=(0.6 * self.cols + 1, 0.6 * self.rows + 1))
        ax.set_xticks(np.arange(-0.5, self.cols), minor=True)
        ax.set_yticks(np.arange(-0.5, self.rows), minor=True)
        ax.grid(which="minor", color="grey", lw=0.5)
        ax.tick_params(which="both", length=0, labelbottom=False, labelleft=False)
        ax.set_xlim(-0.5, self.cols - 0.5)
        ax.set_ylim(self.rows - 0.5, -0.5)
        goal_r, goal_c = divmod(self.goal, self.cols)
        ax.add_patch(plt.Rectangle((goal_c - 0.5, goal_r - 0.5), 1, 1, color="tab:green",
                                   alpha=0.4))
        ax.plot(cols, rows, "-", color="tab:blue", lw=2)
        ax.plot(cols[0], rows[0], "o", color="tab:blue", ms=10)
        ax.set_title(f"GridWorld {self.rows}x{self.cols}: {len(cells) - 1} steps", fontsize=9)
        fig.tight_layout()
        fig.savefig(path, dpi=100, format="png")
        plt.close(fig)

    def __repr__(self) -> str:
        where = "" if self.start is None else f", start={divmod(self.start, self.cols)}"
        if self.goal != self.num_cells - 1:
            where += f", goal={divmod(self.goal, self.cols)}"
        return (f"GridWorld(rows={self.rows}, cols={self.cols}, max_steps={self.max_steps}"
                f"{where})")


def make(name: str, **kwargs: Any) -> GridWorld:
    accepted = ("rows", "cols", "max_steps", "start", "goal")
    unknown = sorted(set(kwargs) - set(accepted))
    if unknown:
        raise EnvError(f"native/{name} has no parameter {', '.join(map(repr, unknown))}; "
                       f"it accepts: {', '.join(accepted)}.")
    return GridWorld(**kwargs)
