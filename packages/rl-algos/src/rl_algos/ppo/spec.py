"""PPO's declaration (see `rl_algos.common.spec`)."""

from rl_algos.common.policy import actor_critic_policy
from rl_algos.common.spec import ANY_ACTION, AlgoSpec
from rl_algos.ppo.config import PRESETS, PPOConfig, PPOHParams
from rl_algos.ppo.train import make_algorithm

SPEC = AlgoSpec(
    "ppo", "Proximal Policy Optimization (clipped surrogate, GAE)",
    config_cls=PPOConfig, hparams_cls=PPOHParams, presets=PRESETS, make_algorithm=make_algorithm,
    make_policy=actor_critic_policy, action_spaces=ANY_ACTION, data_parallel=True,
    self_play=True,
)
