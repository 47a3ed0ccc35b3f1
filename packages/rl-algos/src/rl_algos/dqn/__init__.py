"""DQN, Deep Q-Network (Mnih et al., 2015, "Human-level control through deep reinforcement
learning"): a Q-network learnt from an on-device replay buffer towards the values of a target
network (copied every few thousand steps, or Polyak-averaged), ε-greedy exploration with a linear
decay, the Huber loss and Adam with gradient clipping; with Double DQN targets (van Hasselt, Guez
and Silver, 2016: the online network picks the next action, the target network values it),
optional dueling heads (Wang et al., 2016) and n-step returns cut at episode ends. Bootstraps on
truncation (from the true final observation), never on termination; illegal actions
(`info["action_mask"]`) are excluded when acting and from the target's argmax."""

from rl_algos.dqn.config import PRESETS, DQNConfig, DQNHParams
from rl_algos.dqn.losses import double_q_target, n_step_return, td_loss
from rl_algos.dqn.networks import DQNNetwork, dueling_aggregate
from rl_algos.dqn.train import DQNExtras, make_algorithm, make_policy, make_train

__all__ = ["PRESETS", "DQNConfig", "DQNExtras", "DQNHParams", "DQNNetwork", "double_q_target",
           "dueling_aggregate", "make_algorithm", "make_policy", "make_train", "n_step_return",
           "td_loss"]
