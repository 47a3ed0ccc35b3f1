"""DPO's training program: PPO's `make_algorithm` with the DPO objective, nothing else."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from rl_algos.dpo.config import DPOConfig
from rl_algos.dpo.losses import dpo_objective
from rl_algos.ppo.train import make_algorithm as _ppo_make_algorithm
from rl_core import Algorithm, DataAxis, TrainResult
from rl_core import make_train as _make_train


def make_algorithm(env: Any, config: DPOConfig,
                   data_axis: DataAxis | None = None) -> Algorithm:
    """DPO on `env` (one unbatched environment implementing the port)."""
    return _ppo_make_algorithm(env, config, data_axis, objective=dpo_objective)


def make_train(env: Any, config: DPOConfig) -> Callable[[jax.Array, Any], TrainResult]:
    """`train(key, hparams) -> TrainResult`, pure: `jax.jit(jax.vmap(train))` trains many seeds."""
    return _make_train(make_algorithm(env, config))
