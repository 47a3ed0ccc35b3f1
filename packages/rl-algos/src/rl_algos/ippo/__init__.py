"""Independent PPO with parameter sharing (IPPO; de Witt, Gupta, Makoviichuk, Makoviychuk, Torr,
Sun and Whiteson, 2020, "Is Independent Learning All You Need in the StarCraft Multi-Agent
Challenge?"; JaxMARL's IPPO baselines, Rutherford et al., 2023): PPO's update on a multi-agent
environment seen as its agents batched (`rl_core.AgentsAsBatch`), one actor-critic shared by
every agent, each agent's advantage computed from its own reward, value and termination
(bootstrapping where a time limit truncates it).

`make_algorithm` is PPO's: the wrapper stack batches the agents, so PPO's update sees
`num_envs * num_agents` actors. `total_timesteps` counts environment steps (JaxMARL's
convention), so an update consumes `num_envs * num_steps` of them and learns from
`num_envs * num_agents * num_steps` transitions. Reported returns are team returns (the sum
of the agents' returns), counted when an environment's episode ends."""

from rl_algos.ippo.config import PRESETS, IPPOConfig, IPPOHParams
from rl_algos.ppo.train import make_algorithm

__all__ = ["PRESETS", "IPPOConfig", "IPPOHParams", "make_algorithm"]
