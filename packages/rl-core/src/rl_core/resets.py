"""Optimistic resets: `VectorEnv(AutoReset(env), N)` for environments whose reset costs far more
than a step.

`AutoReset` computes a reset at every step of every environment and keeps it where an episode
ended (under `vmap` both branches of a choice are computed anyway). When the reset is cheap that
costs little; when it generates a world (Craftax: a procedurally generated map, about 30 steps'
worth of work) it dominates training. Craftax's own training code (Matthews et al., 2024,
`OptimisticResetVecEnvWrapper`) computes only `N / reset_ratio` resets per step and hands them
to the environments that ended; this is that scheme behind the port.

Each step computes `R = max(1, N // reset_ratio)` resets; the environments whose episode ended
take them in index order, the k-th ending environment the reset `k mod R`. When more than `R`
episodes end in one step, some start from the same world (the same state and observation: the
cost of the scheme, rare when episodes are long and R is a fair share of N). Everything else is
`AutoReset`'s: the true last observation in `info["final_observation"]`, the STATE_INFO_KEYS
following the new episode. With `reset_ratio=1` every environment gets its own reset, drawn
from other keys than `AutoReset`'s.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from rl_core.multiagent import episode_over
from rl_core.types import TimeStep
from rl_core.wrappers import AutoReset, Wrapper, start_next_episode


class OptimisticResetVectorEnv(Wrapper):
    """`num_envs` copies of `env` stepped together (leaves `[num_envs, ...]`, as `VectorEnv`),
    restarted when their episode ends from `num_envs // reset_ratio` resets computed per step
    (see the module docstring). `step` takes one key."""

    def __init__(self, env: Any, num_envs: int, reset_ratio: int):
        super().__init__(env)
        if int(num_envs) < 1 or int(reset_ratio) < 1:
            raise ValueError(f"OptimisticResetVectorEnv needs num_envs >= 1 and reset_ratio >= 1, "
                             f"got {num_envs} and {reset_ratio}.")
        self.num_envs = int(num_envs)
        self.num_resets = max(1, self.num_envs // int(reset_ratio))

    @property
    def step_key_shape(self) -> tuple[int, ...]:
        return ()

    def reset(self, key: jax.Array) -> tuple[Any, TimeStep]:
        return jax.vmap(AutoReset(self.env).reset)(jax.random.split(key, self.num_envs))

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> tuple[Any, TimeStep]:
        k_step, k_reset = jax.random.split(key)
        state_st, ts = jax.vmap(self.env.step)(state, action,
                                                jax.random.split(k_step, self.num_envs))
        state_re, ts_re = jax.vmap(self.env.reset)(jax.random.split(k_reset, self.num_resets))
        done = jax.vmap(episode_over)(ts)
        which = (jnp.cumsum(done) - 1) % self.num_resets  # the k-th ended env: reset k mod R
        state_re, ts_re = jax.tree.map(lambda x: x[which], (state_re, ts_re))
        return jax.vmap(start_next_episode)(state_st, ts, state_re, ts_re)
