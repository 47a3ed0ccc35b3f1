"""Multi-agent PPO with a centralised critic (MAPPO; Yu, Velu, Vinitsky, Gao, Wang, Bayen and Wu,
NeurIPS 2022 Datasets and Benchmarks, "The Surprising Effectiveness of PPO in Cooperative
Multi-Agent Games"; JaxMARL's MAPPO baselines, Rutherford et al., 2023): IPPO's parameter-shared
actor, which reads only its agent's own observation, and a critic that reads the global state
(the environment's `info["global_state"]`, or every agent's observation concatenated where it has
none) with the agent's one-hot id: the paper's agent-specific global state.

`make_algorithm` is PPO's on `rl_core.CentralisedCritic(env)`: each agent's observation carries
the critic's input after its own, and the network (`ActorCritic` with `actor_size`) splits it.
The actor's and the critic's gradients are clipped each by its own global norm, as the paper's
and JaxMARL's two optimisers do (`rl_algos.common.sgd.network_parts`).
The actor never sees the global state, so the trained policy acts on the environment's own
observations (evaluation, rendering) unchanged. Returns are team returns, as IPPO's."""

from rl_algos.mappo.config import PRESETS, MAPPOConfig, MAPPOHParams
from rl_algos.mappo.train import make_algorithm, make_policy

__all__ = ["PRESETS", "MAPPOConfig", "MAPPOHParams", "make_algorithm", "make_policy"]
