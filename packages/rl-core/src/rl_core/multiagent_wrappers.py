"""The multi-agent port's own wrappers (`rl_core.multiagent`): the agents seen as a batch of
single-agent actors (a parameter-shared learner, IPPO), and the observation a centralised critic
reads (MAPPO)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rl_core.multiagent import episode_over
from rl_core.spaces import Box
from rl_core.types import TimeStep
from rl_core.wrappers import TimeStepMap


class AgentsAsBatch(TimeStepMap):
    """A vectorised multi-agent stack (`VectorEnv` over an environment of the multi-agent port:
    leaves `[N, A, ...]`) seen as `N * A` single-agent environments: every leaf `[N * A, ...]`
    (environment-major, `rl_core.agents_as_batch`), actions taken `[N * A, ...]`. A
    parameter-shared learner (IPPO) trains on it as on any vectorised environment; `num_envs` is
    its number of actors. The state stays per environment; each agent's `terminated` and
    `truncated` are its own (an agent may be out before its team), and the stack below resets an
    environment when all its agents are out (`AutoReset`).

    Per environment, repeated for each of its agents: `info["episode_over"]` (bool: every agent
    is out, the episode has ended; what episode statistics count, `episode_metrics`) and, with
    `EpisodeStatistics` below, `info["episode_length"]` and `info["episode_return"]`, the team's
    return (the sum of the agents' returns: JaxMARL's reported "returns"), so that an average
    over the actors of ended episodes is the team's; each agent's own return stays in
    `info["agent_episode_return"]`. Every other leaf must carry the agent axis (the port's
    contract).
    """

    PER_ENVIRONMENT = ("episode_length", "episode_return", "episode_over")

    def __init__(self, env: Any):
        super().__init__(env)
        self.num_agents = int(env.num_agents)
        self.num_env_copies = int(env.num_envs)
        self.num_envs = self.num_env_copies * self.num_agents

    def map_timestep(self, ts: TimeStep) -> TimeStep:
        n, a = self.num_env_copies, self.num_agents

        def flat(x: jax.Array) -> jax.Array:
            if jnp.shape(x)[:2] != (n, a):
                raise ValueError(f"AgentsAsBatch: a leaf of shape {jnp.shape(x)} lacks the "
                                 f"[{n}, {a}] environment and agent axes")
            return jnp.reshape(x, (n * a, *jnp.shape(x)[2:]))

        def per_agent(x: jax.Array) -> jax.Array:  # one value per environment: one per agent
            return jnp.broadcast_to(jnp.expand_dims(x, 1), (n, a, *jnp.shape(x)[1:]))

        info = dict(ts.info)
        if "episode_return" in info:
            info["agent_episode_return"] = info["episode_return"]
            info["episode_return"] = jnp.sum(info["episode_return"], axis=1)
        info["episode_over"] = jax.vmap(episode_over)(ts)
        info = {k: per_agent(v) if k in self.PER_ENVIRONMENT else v for k, v in info.items()}
        return jax.tree.map(flat, ts._replace(info=info))

    def step(self, state: Any, action: jax.Array, key: jax.Array) -> tuple[Any, TimeStep]:
        per_env = jnp.reshape(action, (self.num_env_copies, self.num_agents,
                                       *jnp.shape(action)[1:]))
        return super().step(state, per_env, key)


class CentralisedCritic(TimeStepMap):
    """A multi-agent environment (the port's `[A, ...]` leaves, unvectorised, flat observations
    `[D]`) whose observation also carries what a centralised critic sees (MAPPO: Yu, Velu,
    Vinitsky, Gao, Wang, Bayen and Wu, 2022, "The Surprising Effectiveness of PPO in Cooperative
    Multi-Agent Games"): agent a observes `[D + G + A]`, its own observation `[:D]`
    (`actor_size`: all a decentralised actor may read), then the global state `[G]` (the
    environment's `info["global_state"][a]` flattened where it has one, otherwise every agent's
    observation concatenated, as JaxMARL's MAPPO world state for MPE), then its one-hot id
    `[A]` (the paper's agent-specific global state). Put it below the episode and reset
    wrappers, so that the true final observation carries its global state too."""

    def __init__(self, env: Any):
        super().__init__(env)
        space = env.observation_space
        if not (isinstance(space, Box) and len(space.shape) == 1):
            raise ValueError("CentralisedCritic needs flat observations [D], got "
                             f"{space}; flatten the environment's observation first")
        self.num_agents = a = int(env.num_agents)
        self.actor_size = d = int(space.shape[0])
        _, ts = jax.eval_shape(env.reset, jax.random.PRNGKey(0))
        self._from_info = "global_state" in ts.info
        if self._from_info:
            g = int(np.prod(ts.info["global_state"].shape[1:]))
            low, high = np.full(g, -np.inf), np.full(g, np.inf)
        else:
            g = a * d
            low, high = np.tile(space.low, a), np.tile(space.high, a)
        self._observation_space = Box(np.concatenate([space.low, low, np.zeros(a)]),
                                      np.concatenate([space.high, high, np.ones(a)]),
                                      (d + g + a,))

    @property
    def observation_space(self) -> Any:
        return self._observation_space

    def map_timestep(self, ts: TimeStep) -> TimeStep:
        a = self.num_agents
        if self._from_info:
            state = jnp.reshape(ts.info["global_state"], (a, -1)).astype(jnp.float32)
        else:
            state = jnp.broadcast_to(jnp.reshape(ts.observation, (1, -1)),
                                     (a, a * self.actor_size))
        obs = jnp.concatenate([ts.observation, state, jnp.eye(a, dtype=jnp.float32)], axis=1)
        return ts._replace(observation=obs)
