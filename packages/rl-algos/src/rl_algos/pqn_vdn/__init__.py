"""PQN with value decomposition (PQN-VDN; Gallici, Fellows, Ellis, Pou, Masmitja, Foerster and
Martin, 2024, "Simplifying Deep Temporal Difference Learning", its multi-agent experiments; VDN:
Sunehag et al., 2018, "Value-Decomposition Networks For Cooperative Multi-Agent Learning"): one
Q-network shared by the agents, the team's value the sum of the agents' chosen Q-values,
Q_tot(s, u) = Σ_a Q(o_a, u_a), learnt as PQN learns Q: Q(λ) targets of the team's reward (the
sum of the agents' rewards) from the current network, no target network, no replay. The team's
next value is the sum of each agent's max over its legal actions, an agent that is out adding
nothing (in the loss's sum too: an agent counts from its episode's start until it is out); the
team's episode ends when every agent's does, a termination when all are
terminated (otherwise it bootstraps, as a time limit does). Acting is each agent's own ε-greedy
over its Q, so the policy acts on the environment's own observations like IPPO's."""

from rl_algos.pqn_vdn.config import PRESETS, PQNVDNConfig, PQNVDNHParams
from rl_algos.pqn_vdn.train import acting, make_algorithm, make_policy, team_q, team_targets

__all__ = ["PRESETS", "PQNVDNConfig", "PQNVDNHParams", "acting", "make_algorithm", "make_policy",
           "team_q", "team_targets"]
