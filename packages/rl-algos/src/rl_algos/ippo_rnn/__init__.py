"""Independent recurrent PPO with parameter sharing (IPPO with a GRU; JaxMARL's `ippo_rnn`
baselines, Rutherford et al., 2023): recurrent PPO's update (`rl_algos.ppo_rnn`) on a multi-agent
environment seen as its agents batched (`rl_core.AgentsAsBatch`), one network and one hidden
state per agent, an agent's memory reset at the first step after it was out (its episode ended,
or, in a game where agents leave early, while it stays out).
`total_timesteps` and `num_envs` count environments' steps and environments, as in `ippo`."""

from rl_algos.ippo_rnn.config import PRESETS, IPPORNNConfig

__all__ = ["PRESETS", "IPPORNNConfig"]
