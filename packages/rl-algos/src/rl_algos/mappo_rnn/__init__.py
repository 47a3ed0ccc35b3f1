"""Recurrent MAPPO (Yu, Velu, Vinitsky, Gao, Wang, Bayen and Wu, 2022; JaxMARL's
`mappo_rnn` baselines, Rutherford et al., 2023): recurrent IPPO's update (`rl_algos.ppo_rnn` over
the agents batched) with two recurrent networks shared by the agents, an actor on the agent's own
observation and a critic on the global state with the agent's one-hot id
(`rl_core.CentralisedCritic`; on SMAX, JaxMARL's world state), each network's gradient clipped
by its own norm as JaxMARL's two optimisers clip theirs. The actor never reads the global
state, so the trained policy acts on the environment's own observations (evaluation,
rendering) unchanged. `total_timesteps` and `num_envs` count environments' steps and
environments, as in `ippo`; returns are team returns."""

from rl_algos.mappo_rnn.config import PRESETS, MAPPORNNConfig
from rl_algos.mappo_rnn.train import make_algorithm, make_policy

__all__ = ["PRESETS", "MAPPORNNConfig", "make_algorithm", "make_policy"]
