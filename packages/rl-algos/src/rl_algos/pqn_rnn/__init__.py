"""Recurrent PQN: PQN (Gallici et al., 2024) with a GRU between the Q-network's LayerNorm torso
and its head, for partially observed tasks, as the PQN reference's `pqn_rnn` (purejaxql): the
hidden state carried through the rollout and reset at episode starts, Q(λ) targets from the
current network along each environment's sequence, and minibatches of whole sequences replayed
from their stored initial states."""

from rl_algos.pqn_rnn.config import PRESETS, PQNRNNConfig
from rl_algos.pqn_rnn.train import RecurrentQNetwork, make_algorithm, make_policy, make_train

__all__ = ["PRESETS", "PQNRNNConfig", "RecurrentQNetwork", "make_algorithm", "make_policy",
           "make_train"]
