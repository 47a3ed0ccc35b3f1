"""PQN, Parallelised Q-Network (Gallici, Fellows, Ellis, Pou, Masmitja, Foerster and Martin, 2024,
"Simplifying Deep Temporal Difference Learning"): many vectorised environments, a Q-network with
LayerNorm, no target network, no replay buffer, Q(λ) returns over each collected rollout, ε-greedy
exploration with a linear decay, and several epochs of minibatch updates per rollout. Illegal
actions (`info["action_mask"]`) are excluded when acting and from the max of the targets."""

from rl_algos.pqn.config import PRESETS, PQNConfig, PQNHParams
from rl_algos.pqn.train import make_algorithm, make_policy, make_train, q_network_model

__all__ = ["PRESETS", "PQNConfig", "PQNHParams", "make_algorithm", "make_policy",
           "make_train", "q_network_model"]
