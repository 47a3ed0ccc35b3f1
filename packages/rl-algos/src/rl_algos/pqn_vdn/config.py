"""PQN-VDN configuration: PQN's settings, and presets per multi-agent environment family."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import hparams, require
from rl_algos.common.spec import Preset
from rl_algos.pqn.config import PQNConfig, PQNHParams


@dataclass(frozen=True)
class PQNVDNConfig(PQNConfig):
    """PQN's static fields; `num_envs` counts environments (each holding every agent), and a
    minibatch holds `num_envs * num_steps / num_minibatches` team transitions. `team_reward`
    is how the agents' rewards make the team's: "sum" where each agent earns its own part (MPE,
    JaxMARL's default), "mean" where every agent is handed a copy of one shared team reward
    (SMAX: JaxMARL's baselines take one agent's copy, which the mean is)."""

    team_reward: str = "sum"

    def validate(self) -> None:
        super().validate()
        self.require_no_pool("pqn_vdn", "pqn")
        require(self.team_reward in ("sum", "mean"),
                f"team_reward must be 'sum' or 'mean', got {self.team_reward!r}")


@hparams
class PQNVDNHParams(PQNHParams):
    """PQN's traced hyperparameters."""


PRESETS: dict[str, Preset] = {
    # purejaxql's pqn_vdn_rnn_smax.yaml without the GRU (lr 2.5e-4 annealed, lambda 0.85,
    # epsilon 1 -> 0.01 over the first 10%, gradient norm 1, 4 epochs x 16 minibatches) at IPPO's
    # mpe scale (16 envs x 128 steps) with layers of 256; MPE's rewards scaled by 0.1 (team
    # values near -5 instead of -50).
    "mpe": Preset(
        dict(total_timesteps=10_000_000, num_envs=16, num_steps=128, num_epochs=4,
             num_minibatches=16, hidden_size=256, num_layers=2, cnn_channels=0,
             anneal_lr=True),
        dict(lr=2.5e-4, gamma=0.99, q_lambda=0.85, eps_start=1.0, eps_finish=0.01,
             eps_decay=0.1, max_grad_norm=1.0, reward_scale=0.1),
    ),
    # purejaxql's pqn_vdn_rnn_smax.yaml without the GRU: 128 envs x 128 steps, lr 2.5e-4
    # annealed, lambda 0.85, epsilon 1 -> 0.01 over the first 10%, gradient norm 1, 4 epochs x 16
    # minibatches, the team's reward one agent's copy scaled by 10 (REW_SCALE: SMAC's scale); two
    # LayerNorm layers of 256 where it has BatchNorm'd layers of 512 (a quarter of the work per
    # step on this CPU).
    "smax": Preset(
        dict(total_timesteps=10_000_000, num_envs=128, num_steps=128, num_epochs=4,
             num_minibatches=16, hidden_size=256, num_layers=2, cnn_channels=0,
             anneal_lr=True, team_reward="mean"),
        dict(lr=2.5e-4, gamma=0.99, q_lambda=0.85, eps_start=1.0, eps_finish=0.01,
             eps_decay=0.1, max_grad_norm=1.0, reward_scale=10.0),
    ),
}
