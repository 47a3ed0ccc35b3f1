"""The settings every policy-gradient learner with a critic shares (PPO, VPG, A2C)."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import BatchConfig
from rl_algos.common.networks import check_network


@dataclass(frozen=True)
class ActorCriticConfig(BatchConfig):
    """The networks and normalisations of a policy-gradient learner with a critic (PPO, VPG, A2C):
    actor and critic MLPs of `hidden_sizes` with `activation`; advantages normalised over the
    data each gradient step sees; observations and rewards normalised by running statistics."""

    hidden_sizes: tuple[int, ...] = (64, 64)
    activation: str = "tanh"
    normalize_advantages: bool = True
    normalize_observations: bool = False
    normalize_rewards: bool = False

    def validate(self) -> None:
        super().validate()
        check_network(self.hidden_sizes, self.activation)
