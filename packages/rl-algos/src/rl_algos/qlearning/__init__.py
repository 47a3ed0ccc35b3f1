"""Tabular Q-learning (Watkins, 1989; Watkins and Dayan, 1992, "Q-learning"; Sutton and Barto,
2018, §6.5) with ε-greedy exploration and random tie-breaking among maximal Q-values, written to
train many independent agents at once: each agent steps a batch of environments, the whole run is
one `lax.scan`, and agents (seeds) are vmapped."""

from rl_algos.qlearning.config import PRESETS, QLearningConfig, QLearningHParams
from rl_algos.qlearning.train import (
    epsilon_greedy,
    greedy_policy,
    make_algorithm,
    make_policy,
    make_train,
    q_learning_update,
)

__all__ = ["PRESETS", "QLearningConfig", "QLearningHParams", "epsilon_greedy", "greedy_policy",
           "make_algorithm", "make_policy", "make_train", "q_learning_update"]
