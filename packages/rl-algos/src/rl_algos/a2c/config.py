"""A2C configuration: static structure, traced hyperparameters, and presets per env family.

The defaults are Stable-Baselines3's A2C (itself OpenAI Baselines'): 5 steps per environment per
update, RMSProp (decay 0.99, ε 1e-5 outside the square root, as PyTorch's) at 7e-4, γ 0.99, λ 1
(plain n-step returns), value coefficient 0.5, gradients clipped to a global norm of 0.5, two
tanh layers of 64 for actor and critic, advantages not normalised.
"""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.actor_critic import ActorCriticConfig
from rl_algos.common.config import HParamsBase, check_ranges, hparams
from rl_algos.common.spec import Preset


@dataclass(frozen=True)
class A2CConfig(ActorCriticConfig):
    """Static fields: they shape the compiled program (changing one recompiles)."""

    total_timesteps: int = 500_000
    num_envs: int = 8
    num_steps: int = 5  # rollout length per environment per update (one gradient step each)
    normalize_advantages: bool = False


@hparams
class A2CHParams(HParamsBase):
    """Traced float hyperparameters: inputs of `train(key, hparams)`, vmappable in a sweep."""

    lr: float = 7e-4
    gamma: float = 0.99
    gae_lambda: float = 1.0  # 1: n-step returns bootstrapped at the rollout's end, as A2C
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5

    def validate(self) -> None:
        check_ranges(self, positive=("lr", "max_grad_norm"), non_negative=("ent_coef", "vf_coef"),
                     unit=("gamma", "gae_lambda"))


# Defaults per environment family: `Preset`s (static, traced overrides). CartPole & co.: the
# defaults (rl-baselines3-zoo's CartPole-v1 setting: 8 environments, 5e5 steps).
PRESETS: dict[str, Preset] = {
    "classic_control": Preset(),
}
