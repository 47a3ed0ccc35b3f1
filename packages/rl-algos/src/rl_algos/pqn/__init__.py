"""PQN, Parallelised Q-Network (Gallici, Fellows, Ellis, Pou, Masmitja, Foerster and Martin, 2024,
"Simplifying Deep Temporal Difference Learning"): many vectorised environments, a Q-network with
LayerNorm, no target network, no replay buffer, Q(λ) returns over each collected rollout, ε-greedy
exploration with a linear decay, and several epochs of minibatch updates per rollout. Illegal
actions (`info["action_mask"]`) are excluded when acting and from the max of the targets."""

from rl_algos.pqn.config import ENV_PRESETS, PRESETS, PQNConfig, PQNHParams
from rl_algos.pqn.losses import q_lambda_returns, q_loss
from rl_algos.pqn.networks import QNetwork
from rl_algos.pqn.train import epsilon_greedy, make_algorithm, make_policy, make_train

__all__ = ["ENV_PRESETS", "PRESETS", "PQNConfig", "PQNHParams", "QNetwork", "epsilon_greedy",
           "make_algorithm", "make_policy", "make_train", "q_lambda_returns", "q_loss"]
