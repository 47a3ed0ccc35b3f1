"""PPO configuration: static structure, traced hyperparameters, and presets per env family."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.actor_critic import ActorCriticConfig
from rl_algos.common.config import (
    HParamsBase,
    MinibatchConfig,
    check_ranges,
    hparams,
    require,
)
from rl_algos.common.pool import PoolConfig
from rl_algos.common.spec import Preset


@dataclass(frozen=True)
class PPOConfig(PoolConfig, MinibatchConfig, ActorCriticConfig):
    """Static fields: they shape the compiled program (changing one recompiles). The rollout
    (`total_timesteps`, `num_envs`, `num_steps`) and SGD (`num_epochs`, `num_minibatches`)
    fields come from `MinibatchConfig`, with PureJaxRL's CartPole values as defaults, the
    networks and normalisations from `ActorCriticConfig`, and self-play's pool of past
    snapshots from `PoolConfig`."""

    # A shared 3x3 convolution of `cnn_channels` filters over the observation part named
    # `cnn_part` (a key of `env.layout`, e.g. Snake's 'grid'), before the MLPs; '' = none.
    cnn_part: str = ""
    cnn_channels: int = 16
    anneal_lr: bool = True
    clip_value_loss: bool = True
    # The same update in a faster arrangement (docs/benchmarks.md, "PPO vs the PureJaxRL-style
    # peer"): the rollout acts with the actor alone, with every step's reset computed before it
    # (`rl_core.rollout(precompute_resets=True)`), the critic values the rollout's observations
    # and true next observations in one pass after it, and the SGD runs the MLPs feature-major
    # (`actor_critic_feature_major`). Same losses, estimator and random streams; only the float
    # rounding differs, so runs drift apart from the default's over training. Off by default:
    # the documented results were measured without it.
    fast_update: bool = False

    def validate(self) -> None:
        super().validate()
        require(self.cnn_channels >= 1, f"cnn_channels must be >= 1, got {self.cnn_channels}")


@hparams
class PPOHParams(HParamsBase):
    """Traced float hyperparameters: inputs of `train(key, hparams)`, vmappable in a sweep."""

    lr: float = 2.5e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5

    def validate(self) -> None:
        check_ranges(self, positive=("lr", "clip_eps", "max_grad_norm"),
                     non_negative=("ent_coef", "vf_coef"), unit=("gamma", "gae_lambda"))


# Defaults per environment family: `Preset`s (static, traced overrides).
PRESETS: dict[str, Preset] = {
    # The well-known CartPole setting (PureJaxRL / CleanRL): the dataclass defaults.
    "classic_control": Preset(),
    # PureJaxRL's MinAtar setting (its gymnax MinAtar notebook: 64 envs x 128 steps, 4 epochs x 8
    # minibatches, ReLU MLP 64-64 on the flattened planes, lr 5e-3 annealed). At lr 5e-4 six of
    # eight Breakout seeds stay on a plateau of 6-7 at 5e6 steps (docs/algorithms.md).
    "minatar": Preset(
        dict(total_timesteps=5_000_000, num_envs=64, num_steps=128, num_minibatches=8,
             activation="relu"),
        dict(lr=5e-3),
    ),
    # Jumanji's grid and combinatorial tasks (jumanji/Snake-v1 measured, docs/adapters-jumanji.md):
    # wide flat observations with unscaled counters (Snake's step_count runs to 4000), hence
    # normalised observations; more environments per update for throughput.
    "jumanji": Preset(
        dict(total_timesteps=3_276_800, num_envs=64, num_steps=64, num_minibatches=8,
             hidden_sizes=(128, 128), activation="relu", normalize_observations=True),
        dict(lr=5e-4),
    ),
    # pgx board games against a built-in opponent (a win +1, a loss -1): a wider ReLU MLP over
    # the flattened board planes, 32 envs x 64 steps.
    "board_game": Preset(
        dict(total_timesteps=2_000_000, num_envs=32, num_steps=64, num_minibatches=4,
             hidden_sizes=(128, 128), activation="relu"),
        dict(lr=3e-4),
    ),
    "continuous_control": Preset(
        dict(total_timesteps=1_000_000, num_envs=16, num_steps=256, num_epochs=10,
             num_minibatches=32, normalize_observations=True, normalize_rewards=True),
        dict(lr=1e-3, gamma=0.95, ent_coef=0.0),
    ),
    # brax locomotion and balance tasks: PureJaxRL's brax setting (ppo_continuous_action.py:
    # 2048 envs x 10 steps, 4 epochs x 32 minibatches, lr 3e-4, entropy 0, observation and
    # reward normalisation) scaled for a CPU: 128 envs x 16 steps, 8 epochs x 4 minibatches of
    # 512, two layers of 64, lr 5e-4 annealed to 0. The tuning runs on inverted_pendulum are in
    # docs/adapters-brax.md.
    "brax": Preset(
        dict(total_timesteps=2_000_000, num_envs=128, num_steps=16, num_epochs=8,
             num_minibatches=4, anneal_lr=True, normalize_observations=True,
             normalize_rewards=True),
        dict(lr=5e-4, gamma=0.99, ent_coef=0.0),
    ),
}

# jumanji/Snake-v1 (its own family): the jumanji preset with a long horizon (gamma 0.999; 0.99
# plateaued at ~27 fruits, the snake trapping itself at ~25 cells) and the budget it was measured
# at (docs/adapters-jumanji.md: 4 seeds, 58.1 = 9.4x a random legal policy).
PRESETS["jumanji_snake"] = Preset({**PRESETS["jumanji"].config, "total_timesteps": 9_830_400},
                                  {**PRESETS["jumanji"].hparams, "gamma": 0.999})
