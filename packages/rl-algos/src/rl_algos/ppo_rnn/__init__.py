"""Recurrent PPO: PPO with a GRU core between the torso and the heads, for partially observed
tasks (the hidden state carried through the rollout, reset at episode starts, and the stored
sequences replayed in the loss; minibatches are whole environments)."""

from rl_algos.ppo_rnn.config import PRESETS, PPORNNConfig
from rl_algos.ppo_rnn.train import make_algorithm, make_policy, make_train

__all__ = ["PRESETS", "PPORNNConfig", "make_algorithm", "make_policy", "make_train"]
