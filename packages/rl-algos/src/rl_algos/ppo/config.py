"""PPO configuration: static structure, traced hyperparameters, and presets per env family."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from rl_algos.common.config import require
from rl_algos.common.networks import ACTIVATIONS


@dataclass(frozen=True)
class PPOConfig:
    """Static fields: they shape the compiled program (changing one recompiles)."""

    total_timesteps: int = 500_000
    num_envs: int = 4
    num_steps: int = 128  # rollout length per environment per update
    num_epochs: int = 4
    num_minibatches: int = 4
    hidden_sizes: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    # A shared 3x3 convolution of `cnn_channels` filters over the observation part named
    # `cnn_part` (a key of `env.layout`, e.g. Snake's 'grid'), before the MLPs; '' = none.
    cnn_part: str = ""
    cnn_channels: int = 16
    anneal_lr: bool = True
    clip_value_loss: bool = True
    normalize_advantages: bool = True
    normalize_observations: bool = False
    normalize_rewards: bool = False

    @property
    def batch_size(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def minibatch_size(self) -> int:
        return self.batch_size // self.num_minibatches

    @property
    def num_updates(self) -> int:
        return self.total_timesteps // self.batch_size

    def validate(self) -> None:
        for name in ("num_envs", "num_steps", "num_epochs", "num_minibatches"):
            require(getattr(self, name) >= 1, f"{name} must be >= 1, got {getattr(self, name)}")
        require(
            self.batch_size % self.num_minibatches == 0,
            f"num_minibatches={self.num_minibatches} must divide the batch num_envs*num_steps="
            f"{self.batch_size}; pick a divisor of {self.batch_size} or change num_envs/num_steps",
        )
        require(
            self.total_timesteps >= self.batch_size,
            f"total_timesteps={self.total_timesteps} is less than one batch "
            f"(num_envs*num_steps={self.batch_size}); raise it or shrink the batch",
        )
        require(self.activation in ACTIVATIONS,
                f"activation must be one of {sorted(ACTIVATIONS)}, got '{self.activation}'")
        require(all(h >= 1 for h in self.hidden_sizes),
                f"hidden_sizes must be positive, got {self.hidden_sizes}")
        require(self.cnn_channels >= 1, f"cnn_channels must be >= 1, got {self.cnn_channels}")


class PPOHParams(NamedTuple):
    """Traced float hyperparameters: inputs of `train(key, hparams)`, vmappable in a sweep."""

    lr: float = 2.5e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5

    def validate(self) -> None:
        require(self.lr > 0, f"lr must be > 0, got {self.lr}")
        require(0 <= self.gamma <= 1, f"gamma must be in [0, 1], got {self.gamma}")
        require(0 <= self.gae_lambda <= 1, f"gae_lambda must be in [0, 1], got {self.gae_lambda}")
        require(self.clip_eps > 0, f"clip_eps must be > 0, got {self.clip_eps}")
        require(self.ent_coef >= 0, f"ent_coef must be >= 0, got {self.ent_coef}")
        require(self.vf_coef >= 0, f"vf_coef must be >= 0, got {self.vf_coef}")
        require(self.max_grad_norm > 0, f"max_grad_norm must be > 0, got {self.max_grad_norm}")


# Defaults per environment family: (static overrides, hparam overrides).
PRESETS: dict[str, tuple[dict, dict]] = {
    # The well-known CartPole setting (PureJaxRL / CleanRL): the dataclass defaults.
    "classic_control": ({}, {}),
    # PureJaxRL's MinAtar setting (its gymnax MinAtar notebook: 64 envs x 128 steps, 4 epochs x 8
    # minibatches, ReLU MLP 64-64 on the flattened planes, lr 5e-3 annealed). At lr 5e-4 every
    # Breakout seed stayed near a return of 6.5 after 5e6 steps (docs/algorithms.md).
    "minatar": (
        dict(total_timesteps=5_000_000, num_envs=64, num_steps=128, num_minibatches=8,
             activation="relu"),
        dict(lr=5e-3),
    ),
    # Jumanji's grid and combinatorial tasks (jumanji/Snake-v1 measured, docs/adapters-jumanji.md):
    # wide flat observations with unscaled counters (Snake's step_count runs to 4000), hence
    # normalised observations; more environments per update for throughput.
    "jumanji": (
        dict(total_timesteps=3_276_800, num_envs=64, num_steps=64, num_minibatches=8,
             hidden_sizes=(128, 128), activation="relu", normalize_observations=True),
        dict(lr=5e-4),
    ),
    # pgx board games against a built-in opponent (a win +1, a loss -1): a wider ReLU MLP over
    # the flattened board planes, 32 envs x 64 steps.
    "board_game": (
        dict(total_timesteps=2_000_000, num_envs=32, num_steps=64, num_minibatches=4,
             hidden_sizes=(128, 128), activation="relu"),
        dict(lr=3e-4),
    ),
    "continuous_control": (
        dict(total_timesteps=1_000_000, num_envs=16, num_steps=256, num_epochs=10,
             num_minibatches=32, normalize_observations=True, normalize_rewards=True),
        dict(lr=1e-3, gamma=0.95, ent_coef=0.0),
    ),
    # brax locomotion and balance tasks: PureJaxRL's brax setting (ppo_continuous_action.py:
    # 2048 envs x 10 steps, 4 epochs x 32 minibatches, lr 3e-4, entropy 0, observation and
    # reward normalisation) scaled for a CPU: 128 envs x 16 steps, 8 epochs x 4 minibatches of
    # 512, two layers of 64, lr 5e-4 annealed to 0. The tuning runs on inverted_pendulum are in
    # docs/adapters-brax.md.
    "brax": (
        dict(total_timesteps=2_000_000, num_envs=128, num_steps=16, num_epochs=8,
             num_minibatches=4, anneal_lr=True, normalize_observations=True,
             normalize_rewards=True),
        dict(lr=5e-4, gamma=0.99, ent_coef=0.0),
    ),
}

# jumanji/Snake-v1 (its own family): the jumanji preset with a long horizon (gamma 0.999; 0.99
# plateaued at ~27 fruits, the snake trapping itself at ~25 cells) and the budget it was measured
# at (docs/adapters-jumanji.md: 4 seeds, 58.1 = 9.4x a random legal policy).
PRESETS["jumanji_snake"] = ({**PRESETS["jumanji"][0], "total_timesteps": 9_830_400},
                            {**PRESETS["jumanji"][1], "gamma": 0.999})
