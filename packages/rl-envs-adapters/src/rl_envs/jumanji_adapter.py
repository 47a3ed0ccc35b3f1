"""jumanji behind the port: `jumanji/<name>` for every registered jumanji environment that can be
built offline.

How jumanji's episode ends map onto the port
--------------------------------------------
jumanji's `step(state, action) -> (state, TimeStep)` marks the last step of an episode with
`step_type == StepType.LAST` and says *why* through the discount:
* LAST with discount 0 (`jumanji.types.termination`) -> `terminated=True, truncated=False`: no
  bootstrapping from the next value.
* LAST with discount > 0 (`jumanji.types.truncation`, e.g. LevelBasedForaging's or Connector's
  time limit) -> `terminated=False, truncated=True`: the value of the true final observation is
  bootstrapped.
* FIRST/MID -> both False.
We follow the library's own signal: several jumanji environments (Snake, Game2048, ...) end on
their time limit with `termination`, and stay terminated here.
Multi-agent environments (a reward or discount per agent: Connector, LevelBasedForaging,
SearchAndRescue) are made single-agent with jumanji's own `MultiToSingleWrapper`: the team reward
is the sum over agents and the discount the max (the episode terminates only when every agent's
discount is 0). The key passed to `step` is unused: a jumanji state carries its own key.
Resets are left to rl-core's `AutoReset`; jumanji's `extras` are dropped (not every env has the
same keys at reset and step, which the port requires of `info`).

Observations
------------
jumanji observations are (nested) NamedTuples. The adapter turns one into a dict from the field
path (`"grid"`, `"agent_position.row"`) to a float32 array of the field's own shape (bools become
0/1), with a dict of `Box` spaces (bounds from the spec: `BoundedArray` min/max, `DiscreteArray`
`[0, num_values - 1]`, unbounded otherwise). The `action_mask` field is not part of the
observation: it goes to `info["action_mask"]`.

By default (`flatten=True`) `make` wraps the environment in rl-core's
`FlattenStructuredObservation`, so algorithms see one float32 vector `[D]` (the parts in sorted
key order). Networks that want the image-like parts back call `env.unflatten(obs)` (works with
leading batch axes and through every wrapper above) and get the dict of `[..., *shape]` arrays
(e.g. Snake's `"grid"` `[12, 12, 5]`) for a convolution; `flatten=False` returns the structured
environment itself.

Actions and masks
-----------------
* `DiscreteArray(n)` -> `Discrete(n)`; the mask is bool `[n]`.
* `MultiDiscreteArray(nvec)` whose mask has one row per dimension (shape `[len(nvec), n]`, e.g.
  one row per agent in RobotWarehouse) -> `MultiDiscrete(nvec)`, with
  `info["action_mask"]` bool `[sum(nvec)]`: the per-dimension masks concatenated, entry
  `offset_i + v` saying whether value `v` is legal in dimension `i` (the layout of
  `MultiCategorical`'s logits). Without a mask (RubiksCube) there is no `action_mask`.
* `MultiDiscreteArray(nvec)` whose mask is *joint* (shape `nvec`: which combinations are legal, as
  in BinPack, Minesweeper, Sudoku, Tetris, FlatPack) -> `Discrete(prod(nvec))`, the combination
  numbered row-major (`jnp.unravel_index` at step) and the mask flattened the same way. A
  factorised mask cannot express a joint constraint, so the flat categorical is the only form in
  which every masked action is really legal.
* A float `BoundedArray` (SearchAndRescue's per-agent 2-d accelerations) -> a `Box` vector of
  the flattened shape, reshaped back at step.
The numbers of values come from the spec once, with numpy, at construction (never traced).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rl_core import Box, Discrete, FlattenStructuredObservation, MultiDiscrete, TimeStep
from rl_envs._registry import EnvError

LIBRARY = "jumanji"

# Every registered jumanji environment (jumanji 1.1.2: `jumanji.registered_environments()`) except
# those in EXCLUDED. Family 'jumanji' selects the algorithms' jumanji presets; Snake has a family
# of its own, 'jumanji_snake', because its tuning differs in the discount (a long-lived snake needs
# a long horizon; jumanji's own training configuration gives Snake 0.997 where most of its tasks
# have 0.99 or 1.0).
ENV_NAMES: list[str] = [
    "BinPack-v2", "CVRP-v1", "Cleaner-v0", "Connector-v3", "FlatPack-v0", "Game2048-v1",
    "GraphColoring-v1", "JobShop-v0", "Knapsack-v1", "LevelBasedForaging-v0", "MMST-v0",
    "Maze-v0", "Minesweeper-v0", "PacMan-v1", "RobotWarehouse-v0",
    "RubiksCube-partly-scrambled-v0", "RubiksCube-v0", "SearchAndRescue-v0",
    "SlidingTilePuzzle-v0", "Snake-v1", "Sudoku-v0", "Sudoku-very-easy-v0", "TSP-v1",
    "Tetris-v0",
]
FAMILY: dict[str, str] = {n: "jumanji" for n in ENV_NAMES} | {"Snake-v1": "jumanji_snake"}
# Registered in jumanji but left out here, with the reason.
EXCLUDED: dict[str, str] = {
    "Sokoban-v0": "downloads its levels (boxoban) from the Hugging Face Hub when built; "
                  "unusable offline",
    "MultiCVRP-v0": "its action spec is an int16 BoundedArray with bounds [0, num_customers + 1] "
                    "(22 values) while each vehicle chooses among num_customers + 1 nodes (its "
                    "mask is [num_vehicles, 21]): the spec is inconsistent, and an integer "
                    "BoundedArray is not a discrete spec the adapter converts",
}

# Observation parts whose values leave their spec's bounds (found by check_environment); the
# adapter declares them unbounded. TSP's `position` is -1 before the first city is chosen.
_UNBOUNDED_PARTS: dict[str, set[str]] = {"TSP-v1": {"position", "trajectory"}}


def _leaf_specs(spec: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """`(path, leaf spec)` for every array in a (nested) jumanji spec, in the spec's order."""
    from jumanji import specs

    if isinstance(spec, specs.Array):
        return [(prefix, spec)]
    out = []
    for name, child in spec._specs.items():
        out += _leaf_specs(child, f"{prefix}.{name}" if prefix else name)
    return out


def _box(spec: Any) -> Box:
    """A float32 Box for one observation leaf spec, with the spec's bounds when it has them."""
    from jumanji import specs

    shape = tuple(int(s) for s in spec.shape)
    if isinstance(spec, specs.BoundedArray):
        low = np.broadcast_to(np.asarray(spec.minimum, np.float32), shape)
        high = np.broadcast_to(np.asarray(spec.maximum, np.float32), shape)
        return Box(low, high, shape, jnp.float32)
    if np.dtype(spec.dtype) == np.bool_:
        return Box(0.0, 1.0, shape, jnp.float32)
    return Box(-np.inf, np.inf, shape, jnp.float32)


def _get(obs: Any, path: str) -> Any:
    for part in path.split("."):
        obs = getattr(obs, part)
    return obs


class JumanjiEnv:
    """One jumanji environment (constructor keywords are passed to `jumanji.make`) with a
    structured observation: a dict of float32 arrays. See the module docstring."""

    def __init__(self, name: str, **kwargs: Any):
        import jumanji
        from jumanji import specs
        from jumanji.wrappers import MultiToSingleWrapper

        self.name = name
        self.family = FAMILY[name]
        try:
            env = jumanji.make(name, **kwargs)
        except (TypeError, ValueError) as e:  # an unknown keyword, or a value of the wrong kind
            raise EnvError(f"jumanji/{name} does not accept {', '.join(map(repr, kwargs))}: "
                           f"{e}. See the constructor of {name}'s class in jumanji.") from None
        if env.reward_spec.shape != () or env.discount_spec.shape != ():
            env = MultiToSingleWrapper(env)  # team reward = sum, discount = max over agents
        self._env = env

        leaves = _leaf_specs(env.observation_spec)
        self._obs_paths = [p for p, _ in leaves if p != "action_mask"]
        loose = _UNBOUNDED_PARTS.get(name, set())
        self.observation_space = {
            p: Box(-np.inf, np.inf, tuple(s.shape), jnp.float32) if p in loose else _box(s)
            for p, s in leaves if p != "action_mask"}
        mask_spec = dict(leaves).get("action_mask")
        mask_shape = None if mask_spec is None else tuple(int(s) for s in mask_spec.shape)

        aspec = env.action_spec
        self._action_shape: tuple[int, ...] | None = None  # continuous: the env's own shape
        self._joint_nvec: tuple[int, ...] | None = None  # joint masks: Discrete(prod) <-> nvec
        self.action_space: Any
        if isinstance(aspec, specs.DiscreteArray):
            self.action_space = Discrete(int(aspec.num_values))
        elif isinstance(aspec, specs.MultiDiscreteArray):
            nvec = tuple(int(n) for n in np.asarray(aspec.num_values).reshape(-1))
            if mask_shape is not None and _is_joint_mask(name, nvec, mask_shape):
                self._joint_nvec = nvec
                self.action_space = Discrete(int(np.prod(nvec)))
            else:
                self.action_space = MultiDiscrete(nvec)
        elif np.issubdtype(np.dtype(aspec.dtype), np.floating):
            self._action_shape = tuple(int(s) for s in aspec.shape)
            size = int(np.prod(self._action_shape))
            low = np.broadcast_to(np.asarray(aspec.minimum, np.float32), self._action_shape)
            high = np.broadcast_to(np.asarray(aspec.maximum, np.float32), self._action_shape)
            self.action_space = Box(low.reshape(-1), high.reshape(-1), (size,), jnp.float32)
        else:
            raise EnvError(f"jumanji/{name}: action spec {aspec!r} is not supported")
        self._has_mask = mask_shape is not None

    # -- conversions ---------------------------------------------------------------------------

    def _observation(self, obs: Any) -> dict[str, jax.Array]:
        return {p: jnp.asarray(_get(obs, p), jnp.float32) for p in self._obs_paths}

    def _info(self, obs: Any) -> dict[str, jax.Array]:
        if not self._has_mask:
            return {}
        return {"action_mask": jnp.asarray(obs.action_mask, jnp.bool_).reshape(-1)}

    def _env_action(self, action: jax.Array) -> Any:
        if self._joint_nvec is not None:
            return jnp.stack(jnp.unravel_index(action, self._joint_nvec)).astype(jnp.int32)
        if self._action_shape is not None:
            return jnp.reshape(action, self._action_shape)
        return action

    # -- the port ------------------------------------------------------------------------------

    render_suffix = ".gif"

    def render_episode(self, states: Sequence[Any], path: str) -> None:
        """An animated GIF of one episode: Snake's frames drawn as arrays (a 1,000-step episode
        in about a second, where matplotlib's animation takes a minute), every other task with
        the environment's own `animate` (matplotlib)."""
        if self.name == "Snake-v1":
            from rl_envs._frames import save_gif

            return save_gif(snake_frames(states), path, fps=7)
        import matplotlib

        matplotlib.use("Agg")
        if not hasattr(self._env, "animate"):
            raise EnvError(f"jumanji's {type(self._env).__name__} has no animate(); it cannot "
                           "be rendered")
        import matplotlib.pyplot as plt

        self._env.animate(list(states), interval=150, save_path=str(path))
        plt.close("all")

    def reset(self, key: jax.Array) -> tuple[Any, TimeStep]:
        state, ts = self._env.reset(key)
        return state, TimeStep(
            observation=self._observation(ts.observation),
            reward=jnp.zeros((), jnp.float32),
            terminated=jnp.zeros((), jnp.bool_),
            truncated=jnp.zeros((), jnp.bool_),
            info=self._info(ts.observation),
        )

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> tuple[Any, TimeStep]:
        del key  # a jumanji state carries its own key
        state, ts = self._env.step(state, self._env_action(action))
        last = jnp.asarray(ts.last(), jnp.bool_).reshape(())
        stops = jnp.asarray(ts.discount).reshape(()) == 0
        return state, TimeStep(
            observation=self._observation(ts.observation),
            reward=jnp.asarray(ts.reward, jnp.float32).reshape(()),
            terminated=jnp.logical_and(last, stops),
            truncated=jnp.logical_and(last, jnp.logical_not(stops)),
            info=self._info(ts.observation),
        )

    def __repr__(self) -> str:
        return f"JumanjiEnv({self.name!r})"


def _is_joint_mask(name: str, nvec: tuple[int, ...], mask_shape: tuple[int, ...]) -> bool:
    """Whether a MultiDiscrete environment's mask is joint (shape `nvec`) or per dimension
    (`[len(nvec), max(nvec)]` with equal sizes); an ambiguous or unknown shape is an error."""
    joint = mask_shape == nvec
    per_dim = mask_shape == (len(nvec), max(nvec)) and len(set(nvec)) == 1
    if joint == per_dim:
        raise EnvError(
            f"jumanji/{name}: cannot tell whether its action mask {mask_shape} is joint or per "
            f"dimension for num_values {list(nvec)}; the adapter supports joint masks of shape "
            "num_values and per-dimension masks [len(num_values), n]"
        )
    return joint


def make(name: str, flatten: bool = True, **kwargs: Any) -> Any:
    """`jumanji/<name>`: flat float32 observations by default (`flatten=False`: the structured
    dict observation; `env.unflatten(obs)` recovers it from the flat vector)."""
    env = JumanjiEnv(name, **kwargs)
    return FlattenStructuredObservation(env) if flatten else env


def snake_frames(states: Sequence[Any], cell: int = 20) -> list[Any]:
    """Snake frames `[H, W, 3]` uint8, `cell` pixels a square: the board dark, the body green
    from tail (dim) to head (bright, outlined), the fruit red, a faint grid."""
    frames = []
    for state in states:
        body_state = np.asarray(state.body_state)  # 0 empty, else 1 (tail) .. length (head)
        rows, cols = body_state.shape
        shade = body_state / max(int(body_state.max()), 1)
        rgb = np.zeros((rows, cols, 3), np.float32) + np.array([28, 30, 34], np.float32)
        body = body_state > 0
        rgb[body] = np.array([40, 110, 50]) + shade[body, None] * np.array([50, 130, 60])
        fruit = (int(state.fruit_position.row), int(state.fruit_position.col))
        rgb[fruit] = (220, 50, 47)
        image = np.kron(rgb, np.ones((cell, cell, 1))).astype(np.uint8)
        image[::cell, :] = image[:, ::cell] = (45, 48, 54)  # the grid
        r, c = int(state.head_position.row) * cell, int(state.head_position.col) * cell
        image[r:r + cell, c:c + 2] = image[r:r + cell, c + cell - 2:c + cell] = (240, 240, 240)
        image[r:r + 2, c:c + cell] = image[r + cell - 2:r + cell, c:c + cell] = (240, 240, 240)
        frames.append(image)
    return frames
