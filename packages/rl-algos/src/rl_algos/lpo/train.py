"""LPO's training program: PPO's `make_algorithm` with the learned-drift objective, nothing else."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from rl_algos.lpo.config import LPOConfig
from rl_algos.lpo.drift import lpo_objective
from rl_algos.ppo.train import make_algorithm as _ppo_make_algorithm
from rl_core import Algorithm, DataAxis, TrainResult
from rl_core import make_train as _make_train


def make_algorithm(env: Any, config: LPOConfig,
                   data_axis: DataAxis | None = None) -> Algorithm:
    """LPO on `env`; its hparams must carry the drift parameters (`LPOHParams.drift`)."""
    return _ppo_make_algorithm(env, config, data_axis, objective=lpo_objective)


def make_train(env: Any, config: LPOConfig) -> Callable[[jax.Array, Any], TrainResult]:
    """`train(key, hparams) -> TrainResult`, pure: `jax.jit(jax.vmap(train))` trains many seeds
    or, with a `[M]` axis on `hparams.drift`, many drifts."""
    return _make_train(make_algorithm(env, config))
