"""AlphaZero configuration: static structure, traced hyperparameters, and presets."""

from __future__ import annotations

from dataclasses import dataclass

from rl_algos.common.config import (
    BatchConfig,
    HParamsBase,
    check_ranges,
    hparams,
    require,
    require_positive,
)
from rl_algos.common.spec import Preset


@dataclass(frozen=True)
class AlphaZeroConfig(BatchConfig):
    """Static fields: they shape the compiled program (changing one recompiles).

    An update plays `num_steps` moves in each of `num_envs` self-play games (finished games are
    replaced by new ones) and adds the previous update's `num_envs * num_steps` positions to the
    replay, with their targets (a position's value target is its game's outcome, mixed with the
    search's root value by `value_mix`: the game must end within the next update's moves, which
    every game does when `num_steps` is at least its longest length). The replay holds the last
    `replay_updates` updates' positions; then `sgd_steps` AdamW steps on minibatches of
    `minibatch_size` positions drawn uniformly from its positions with targets."""

    total_timesteps: int = 200_000  # self-play moves (positions), over all games
    num_envs: int = 64  # self-play games played at once
    num_steps: int = 32  # moves per game per update
    num_simulations: int = 32  # search simulations per move
    max_considered_actions: int = 16  # Gumbel MuZero's root candidates (Sequential Halving)
    # The first `opening_moves` moves of each self-play game are drawn from the search's improved
    # policy instead of taken as its choice (AlphaZero's temperature-1 opening, Silver et al.
    # 2018): without it a sharpened network can replay the same few games; 0 turns it off.
    opening_moves: int = 0
    # Each position drawn for an SGD step is replaced by its left-right mirror image (board,
    # legal moves and policy target; the value is unchanged) with probability 1/2: the data
    # augmentation by the board's symmetries of AlphaGo Zero (Silver et al., 2017), for the games
    # whose model has a reflection (`rl_core.TurnBasedGame.reflect`: connect_four, tic_tac_toe,
    # go). Off: the minibatches are the positions as played.
    reflect: bool = False
    replay_updates: int = 4
    sgd_steps: int = 16
    minibatch_size: int = 256
    hidden_size: int = 128
    num_layers: int = 2  # dense layers of the MLP; with num_blocks > 0, of the heads' torso
    num_blocks: int = 0  # residual blocks of 3x3 convolutions over the board; 0: an MLP
    channels: int = 32  # the residual blocks' width
    # Games played against the environment's own opponent by the network alone (the most probable
    # legal move, no search), one move per self-play move: the run's episode returns, a
    # yardstick that a user watches rise (they train nothing).
    eval_envs: int = 16

    @property
    def replay_size(self) -> int:
        return self.replay_updates * self.steps_per_update

    def validate(self) -> None:
        super().validate()
        require_positive(self, "num_simulations", "replay_updates", "sgd_steps",
                         "minibatch_size", "hidden_size", "num_layers", "channels", "eval_envs")
        check_ranges(self, non_negative=("num_blocks", "opening_moves"))
        require(self.max_considered_actions >= 2,
                f"max_considered_actions must be >= 2, got {self.max_considered_actions}")


@hparams
class AlphaZeroHParams(HParamsBase):
    """Traced float hyperparameters: inputs of `train(key, hparams)`, vmappable in a sweep."""

    lr: float = 1e-3
    max_grad_norm: float = 1.0
    value_coef: float = 1.0  # weight of the value's squared error beside the policy's cross-entropy
    weight_decay: float = 1e-4  # AdamW's decoupled decay (AlphaZero's L2 regularisation)
    # The value target: the game's outcome mixed with the search's root value, (1 - value_mix)
    # * outcome + value_mix * root value; 0 is AlphaZero's outcome alone.
    value_mix: float = 0.0

    def validate(self) -> None:
        check_ranges(self, positive=("lr", "max_grad_norm"),
                     non_negative=("value_coef", "weight_decay"), unit=("value_mix",))


PRESETS: dict[str, Preset] = {
    # The board games at a size this CPU trains in minutes: an MLP on the flattened planes (a
    # convolution made each search ~10x dearer on CPU for boards this small); `num_blocks` gives
    # the residual network where an accelerator pays for it. The yardstick games are against the
    # one-move look-ahead player where the game has one.
    # 48 moves per update: every connect_four position (games of at most 42 moves) gets its
    # target; longer games (othello, go, chess) lose the positions of games that outlast the
    # next update.
    "board_game": Preset(dict(hidden_size=256, num_layers=3, num_steps=48)),
}
