"""A2C, the synchronous advantage actor-critic (Mnih et al., 2016, "Asynchronous Methods for Deep
Reinforcement Learning", Algorithm S3, run synchronously over vectorised environments as in
OpenAI Baselines and Stable-Baselines3): short rollouts, n-step returns bootstrapped from the
critic, and one RMSProp step per rollout on the policy gradient, the value regression and an
entropy bonus together."""

from rl_algos.a2c.config import PRESETS, A2CConfig, A2CHParams
from rl_algos.a2c.losses import a2c_loss
from rl_algos.a2c.train import make_algorithm, make_train

__all__ = ["PRESETS", "A2CConfig", "A2CHParams", "a2c_loss", "make_algorithm", "make_train"]
