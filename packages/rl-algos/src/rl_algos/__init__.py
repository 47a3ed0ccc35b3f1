"""rl_algos: Equinox + optax algorithms that only know the rl-core environment port."""

from rl_algos.common.config import ConfigError
from rl_algos.registry import ALGORITHMS, AlgoSpec, get

__all__ = ["ALGORITHMS", "AlgoSpec", "ConfigError", "get"]
