"""Pieces shared by every algorithm: configs, networks, distributions, returns, env stack, minibatch
shuffling, and the on-device replay buffer of off-policy algorithms."""

from rl_algos.common.config import ConfigError, hparams_as_arrays, require
from rl_algos.common.distributions import (
    MASKED_LOGIT,
    Categorical,
    DiagGaussian,
    MultiCategorical,
    distribution_for,
)
from rl_algos.common.envs import episode_metrics, make_vector_env
from rl_algos.common.networks import (
    ACTIVATIONS,
    MLP,
    ActorCritic,
    actor_critic_factory,
    orthogonal_linear,
    orthogonal_weight,
)
from rl_algos.common.replay import ReplayBuffer
from rl_algos.common.returns import gae
from rl_algos.common.shuffle import permutation, shuffled_minibatches, stable_argsort_u32

__all__ = [
    "ACTIVATIONS", "MASKED_LOGIT", "MLP", "ActorCritic", "Categorical", "ConfigError",
    "actor_critic_factory",
    "DiagGaussian", "MultiCategorical", "ReplayBuffer", "distribution_for", "episode_metrics",
    "gae",
    "hparams_as_arrays", "make_vector_env", "orthogonal_linear", "orthogonal_weight",
    "permutation", "require", "shuffled_minibatches", "stable_argsort_u32",
]
