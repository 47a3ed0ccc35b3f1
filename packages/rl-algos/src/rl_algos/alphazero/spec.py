"""AlphaZero's declaration (see `rl_algos.common.spec`): a planner, trained on a board game's own
rules (`env.game_model()`)."""

from rl_algos.alphazero.config import PRESETS, AlphaZeroConfig, AlphaZeroHParams
from rl_algos.alphazero.train import make_algorithm, make_planner, make_policy
from rl_algos.common.spec import AlgoSpec
from rl_core import Discrete

SPEC = AlgoSpec(
    "alphazero", "AlphaZero with Gumbel MuZero search (self-play on a board game's rules)",
    config_cls=AlphaZeroConfig, hparams_cls=AlphaZeroHParams, presets=PRESETS,
    make_algorithm=make_algorithm, make_policy=make_policy, action_spaces=(Discrete,),
    make_planner=make_planner, data_parallel=True,
)
