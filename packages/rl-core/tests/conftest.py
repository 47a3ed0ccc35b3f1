"""A tiny hand-written environment implementing the port, shared by the rl-core tests.

CounterEnv: the observation is `[t, offset]` (float32), where `t` counts the steps of the current
episode and `offset` in [0, 1) is drawn from the reset key, so that two episodes (and the reset
observation versus the final one) can be told apart. The reward of a step is `action + 1`, so
returns are easy to add up by hand. The episode terminates when `t` reaches `terminate_at` and is
truncated when `t` reaches `time_limit` (if it did not terminate on that step). With
`with_mask=True`, `info["action_mask"]` forbids action 1 on odd `t` (all actions legal on even t).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import pytest

from rl_core import Box, Discrete, TimeStep


class CounterState(NamedTuple):
    t: jax.Array  # int32 []
    offset: jax.Array  # float32 []


class CounterEnv:
    def __init__(
        self,
        terminate_at: int = 3,
        time_limit: int | None = None,
        with_mask: bool = False,
        n_actions: int = 3,
    ):
        self.terminate_at = terminate_at
        self.time_limit = time_limit
        self.with_mask = with_mask
        self.observation_space = Box(0.0, 1000.0, (2,), jnp.float32)
        self.action_space = Discrete(n_actions)

    def _info(self, t: jax.Array) -> dict:
        if not self.with_mask:
            return {}
        n = self.action_space.n
        return {"action_mask": (jnp.arange(n) != 1) | (t % 2 == 0)}

    def _obs(self, s: CounterState) -> jax.Array:
        return jnp.stack([s.t.astype(jnp.float32), s.offset])

    def reset(self, key: jax.Array) -> tuple[CounterState, TimeStep]:
        s = CounterState(jnp.zeros((), jnp.int32), jax.random.uniform(key, (), jnp.float32))
        f = jnp.zeros((), jnp.bool_)
        return s, TimeStep(self._obs(s), jnp.zeros((), jnp.float32), f, f, self._info(s.t))

    def step(self, state: CounterState, action: jax.Array, key: jax.Array):
        s = CounterState(state.t + 1, state.offset)
        terminated = s.t >= self.terminate_at
        if self.time_limit is None:
            truncated = jnp.zeros((), jnp.bool_)
        else:
            truncated = (s.t >= self.time_limit) & ~terminated
        reward = action.astype(jnp.float32) + 1.0
        return s, TimeStep(self._obs(s), reward, terminated, truncated, self._info(s.t))


@pytest.fixture
def make_counter_env():
    """The CounterEnv class, used as a factory:
    `make_counter_env(terminate_at=3, time_limit=None, with_mask=False, n_actions=3)`."""
    return CounterEnv
