"""SAC, Soft Actor-Critic (Haarnoja, Zhou, Abbeel and Levine, 2018, "Soft Actor-Critic: Off-Policy
Maximum Entropy Deep Reinforcement Learning with a Stochastic Actor"), with the automatically
tuned temperature of Haarnoja et al. (2018b, "Soft Actor-Critic Algorithms and Applications"): a
tanh-squashed Gaussian actor with the log-determinant correction, twin critics with Polyak-averaged
targets and the soft clipped double-Q target, and a temperature learnt towards a target entropy;
TD3's on-device replay buffer, twin critic and batch-first layers. Bootstraps on truncation (from
the true final observation), never on termination."""

from rl_algos.sac.config import PRESETS, SACConfig, SACHParams
from rl_algos.sac.losses import (
    sac_actor_loss,
    sample_squashed,
    soft_q_target,
    squashed_log_prob,
    temperature_loss,
)
from rl_algos.sac.networks import GaussianActor
from rl_algos.sac.train import SACExtras, SACParams, make_algorithm, make_policy, make_train

__all__ = ["PRESETS", "GaussianActor", "SACConfig", "SACExtras", "SACHParams", "SACParams",
           "make_algorithm", "make_policy", "make_train", "sac_actor_loss", "sample_squashed",
           "soft_q_target", "squashed_log_prob", "temperature_loss"]
