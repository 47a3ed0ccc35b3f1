"""The environment port: the one interface every backend adapter implements and every algorithm
consumes. One environment, unbatched; `VectorEnv` adds the batch. Both methods are pure functions
of their inputs, so they can be jitted, vmapped and scanned."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import jax

from rl_core.types import TimeStep


@runtime_checkable
class Environment(Protocol):
    """`reset(key) -> (state, TimeStep)`; `step(state, action, key) -> (state, TimeStep)`.

    The TimeStep from `reset` has reward 0, terminated/truncated False, and an `info` dict with the
    same keys, shapes and dtypes as every `step` returns. Stepping a finished episode is undefined:
    wrap with `AutoReset` to start the next one automatically.
    """

    observation_space: Any
    action_space: Any

    def reset(self, key: jax.Array) -> tuple[Any, TimeStep]: ...

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> tuple[Any, TimeStep]: ...


# The environment families: the vocabulary shared by the adapters (each environment id belongs to
# one, `rl_envs.family(id)`) and the algorithms (their presets are keyed by family). One place,
# so an adapter and an algorithm cannot drift apart on a name; `continuous_control` is no
# adapter's family but the presets' name for any task with Box actions; `custom` is a user's
# environment that names no family (no preset is keyed by it: the algorithms' defaults apply).
FAMILIES = frozenset({"classic_control", "minatar", "bsuite", "misc", "brax", "jumanji",
                      "jumanji_snake", "board_game", "card_game", "puzzle", "tabular",
                      "minigrid", "xland", "craftax", "craftax_classic", "mpe", "smax",
                      "overcooked", "hanabi", "switch_riddle", "coin_game", "storm",
                      "continuous_control", "custom"})
# Families whose every task has continuous actions: their own preset (tuned for that family)
# takes precedence over the generic 'continuous_control' one. Mixed families such as gymnax's
# 'classic_control' (CartPole and Pendulum) are not listed: their preset is for the discrete tasks.
CONTINUOUS_FAMILIES = frozenset({"brax"})
