"""Vanilla Policy Gradient / REINFORCE with a learned value baseline, in the formulation of
OpenAI SpinningUp ("Vanilla Policy Gradient", Achiam, 2018; Williams, 1992; Sutton et al., 2000;
GAE from Schulman et al., 2016): per batch, exactly one gradient step on −E[log π(a|s) Â] with
Â = GAE(γ, λ), then several regression steps of the value function on the GAE targets."""

from rl_algos.vpg.config import PRESETS, VPGConfig, VPGHParams
from rl_algos.vpg.losses import policy_gradient_loss, value_regression_loss
from rl_algos.vpg.train import make_algorithm, make_train

__all__ = ["PRESETS", "VPGConfig", "VPGHParams", "make_algorithm", "make_train",
           "policy_gradient_loss", "value_regression_loss"]
