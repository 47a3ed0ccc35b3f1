"""JaxMARL's turn-based and general-sum games behind the multi-agent port: Hanabi, Switch Riddle,
Coin Game and STORM, each a `JaxMARLEnv` with its own flags and `info` (the reference is
`rl_envs/jaxmarl_adapter.py`'s module docstring). None has a renderer."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from rl_core import TimeStep
from rl_envs.jaxmarl_envs import JaxMARLEnv


class HanabiEnv(JaxMARLEnv):
    """Hanabi, turn-based: the current player's legal moves as its mask, the others' only the
    no-op; the game's end `terminated`. See the module docstring."""

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

    def _with_step_info(self, ts: TimeStep, info: Any) -> TimeStep:
        inner = jnp.asarray(False) if info is None else info["inner_episode_done"]
        inner = jnp.broadcast_to(jnp.asarray(inner, jnp.bool_), (self.num_agents,))
        return ts._replace(info={**ts.info, "inner_episode_done": inner})

    def __repr__(self) -> str:
        return "CoinGameEnv()"


class StormEnv(JaxMARLEnv):
    """STORM's n-player InTheMatrix: agents named by index, the outer episode's limit
    `truncated`. See the module docstring."""

    def _timestep(self, obs: Any, state: Any, rewards: Any, dones: Any) -> TimeStep:
        over = (jnp.asarray(False) if dones is None
                else jnp.asarray(dones["__all__"], jnp.bool_))  # its per-agent keys are names
        return super()._timestep(obs, state, rewards, None)._replace(
            truncated=jnp.broadcast_to(over, (self.num_agents,)))

    def __repr__(self) -> str:
        return f"StormEnv(agents={self.num_agents})"
