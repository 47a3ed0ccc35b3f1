"""DQN configuration: static structure, traced hyperparameters, and presets per env family.

The plain defaults are CleanRL's `dqn.py` for CartPole (itself close to PureJaxRL's `dqn.py`):
a 120-84 ReLU network, a buffer of 1e4 transitions, batch 128, Adam at 2.5e-4, γ 0.99, the target
network copied every 500 environment steps, one gradient step per 10 environment steps after 1e4
steps, ε from 1 to 0.05 over the first half of the run, the squared TD error; here with Double DQN
targets (van Hasselt et al., 2016) and gradients clipped to a global norm of 10. The
`classic_control` preset adds 3-step returns, a final ε of 0.01, a buffer of 1e5 and a learning
rate of 5e-4 annealed to 0 (see `PRESETS`).

The Huber loss of Mnih et al. (2015) (`loss='huber'`, the MinAtar preset's) diverged on CartPole:
beyond an error of 1 it is an absolute error, whose minimiser is the median of the targets, not
their mean. With a reward of 1 per step the rare terminal transitions (target 1) are outvoted by
the bootstrapped ones, and Q rose past 1/(1 - γ) = 100 to ~500 within 1.5e4 steps while the greedy
policy fell to ~10 steps per episode (docs/algorithms.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import HParamsBase, check_ranges, hparams, require, require_positive
from rl_algos.common.offpolicy import OffPolicyConfig
from rl_algos.common.spec import Preset

LOSSES = ("huber", "mse")


@dataclass(frozen=True)
class DQNConfig(OffPolicyConfig):
    """Static fields: they shape the compiled program (changing one recompiles).

    `OffPolicyConfig`'s update: `num_steps` steps of `num_envs` environments into the replay
    buffer, then `gradient_steps` steps on fresh minibatches of `batch_size` (none before
    `learning_starts` environment steps). Every `target_update_interval` environment steps the
    target network moves a Polyak step `tau` (an hparam) towards the online one: `tau=1` is the
    hard copy of Mnih et al. (2015); `target_update_interval` = one update with a small `tau` is
    soft updating.

    `n_step` > 1 learns from n-step returns, cut at episode ends. `double` picks Double DQN's
    target (online argmax, target-network value) over the max of the target network; `dueling`
    splits the head into a value and a mean-subtracted advantage stream (Wang et al., 2016).
    `cnn_channels` > 0 puts the shared `QNetwork`'s 3x3 convolution first for image observations
    `[H, W, C]` (MinAtar); `layer_norm` adds LayerNorm after every hidden layer (as PQN's).
    """

    total_timesteps: int = 500_000
    num_envs: int = 10
    num_steps: int = 1  # vector steps per update
    gradient_steps: int = 1  # gradient steps per update
    batch_size: int = 128
    buffer_size: int = 10_000
    learning_starts: int = 10_000  # environment steps before the first gradient step
    hidden_sizes: tuple[int, ...] = (120, 84)
    activation: str = "relu"
    target_update_interval: int = 500  # environment steps between target-network updates
    n_step: int = 1
    double: bool = True
    dueling: bool = False
    loss: str = "mse"  # 'mse' or 'huber' (δ = 1, the clipped error of Mnih et al.)
    cnn_channels: int = 16  # the convolution for image observations [H, W, C]; 0: none
    layer_norm: bool = False
    anneal_lr: bool = False  # the learning rate decays linearly to 0 over the run

    def validate(self) -> None:
        super().validate()
        require_positive(self, "target_update_interval", "n_step")
        require(self.loss in LOSSES, f"loss must be one of {list(LOSSES)}, got '{self.loss}'")
        require(self.cnn_channels >= 0,
                f"cnn_channels must be >= 0 (0: no convolution), got {self.cnn_channels}")
        window = (self.n_step - 1) * self.num_envs
        require(self.buffer_size > window + self.steps_per_update,
                f"buffer_size={self.buffer_size} must hold more than an update's "
                f"{self.steps_per_update} transitions plus the {window} that an n_step="
                f"{self.n_step} window spans; raise buffer_size or lower n_step")


@hparams
class DQNHParams(HParamsBase):
    """Traced float hyperparameters: inputs of `train(key, hparams)`, vmappable in a sweep."""

    lr: float = 2.5e-4
    gamma: float = 0.99
    tau: float = 1.0  # Polyak step at each target update (1: copy the online network)
    eps_start: float = 1.0
    eps_finish: float = 0.05
    eps_decay: float = 0.5  # fraction of the run over which ε decays linearly
    max_grad_norm: float = 10.0

    def validate(self) -> None:
        check_ranges(self, positive=("lr", "max_grad_norm"),
                     unit=("gamma", "eps_start", "eps_finish"))
        require(0 < self.tau <= 1, f"tau must be in (0, 1], got {self.tau}")
        require(0 < self.eps_decay <= 1, f"eps_decay must be in (0, 1], got {self.eps_decay}")


PRESETS: dict[str, Preset] = {
    # CartPole & co.: the defaults above (CleanRL's and PureJaxRL's CartPole settings) with
    # 3-step returns (Rainbow's n), a final ε of 0.01 (Dopamine's), a buffer of 1e5 and Adam at
    # 5e-4 annealed linearly to 0. With one-step targets Q overshot to ~200 (the true value is at
    # most 1/(1 - γ) = 100) and the late returns oscillated; a 3-step target takes three real
    # rewards and discounts the bootstrapped estimate by γ^3, and Q rose to ~100 without
    # overshooting. A buffer of 1e4 holds only the last ~20 episodes: once they are all
    # successes no failure is left to learn from and the solved policy collapsed now and then;
    # 1e5 keeps them, and the decaying step size stops late updates from undoing the policy
    # (39 of 40 seeds >= 475 against 13 of 16; docs/algorithms.md).
    "classic_control": Preset(dict(n_step=3, buffer_size=100_000, anneal_lr=True),
                        dict(eps_finish=0.01, lr=5e-4)),
    # MinAtar: the DQN baseline of Young and Tian (2019; `examples/dqn.py` of MinAtar): one 3x3
    # convolution of 16 channels, a dense layer of 128, buffer 1e5, batch 32, lr 2.5e-4, target
    # copied every 1000 steps, 5000 steps before learning, ε 1 -> 0.1 over the first 1e5 of 5e6
    # steps. They take a gradient step per environment step (RMSProp); here Adam and one per 4
    # environment steps (Mnih et al.'s ratio), from 4 environments, to fit a CPU budget.
    "minatar": Preset(
        dict(total_timesteps=5_000_000, num_envs=4, num_steps=1, gradient_steps=1,
             batch_size=32, buffer_size=100_000, learning_starts=5_000,
             hidden_sizes=(128,), cnn_channels=16, target_update_interval=1_000,
             loss="huber"),
        dict(lr=2.5e-4, eps_finish=0.1, eps_decay=0.02),
    ),
}
