"""TD3, Twin Delayed Deep Deterministic policy gradient (Fujimoto, van Hoof and Meger, 2018,
"Addressing Function Approximation Error in Actor-Critic Methods"): a deterministic tanh-squashed
actor, twin critics with the clipped double-Q target, target-policy smoothing noise, delayed actor
and target updates with Polyak averaging, Gaussian exploration after a warm-up of uniformly random
actions, and an on-device replay buffer fed by several vectorised environments. Bootstraps on
truncation (from the true final observation), never on termination."""

from rl_algos.td3.config import PRESETS, TD3Config, TD3HParams
from rl_algos.td3.losses import actor_loss, clipped_double_q_target, smoothed_target_action
from rl_algos.td3.networks import Actor
from rl_algos.td3.train import TD3Extras, TD3Params, make_algorithm, make_policy, make_train

__all__ = ["PRESETS", "Actor", "TD3Config", "TD3Extras", "TD3HParams", "TD3Params",
           "actor_loss", "clipped_double_q_target", "make_algorithm", "make_policy",
           "make_train", "smoothed_target_action"]
