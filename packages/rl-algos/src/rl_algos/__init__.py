"""rl_algos: Equinox + optax algorithms that only know the rl-core environment port."""

from rl_algos.common.config import ConfigError
from rl_algos.common.spec import AlgoSpec, Preset
from rl_algos.registry import ALGORITHMS, get, multi_agent_names

__all__ = ["ALGORITHMS", "AlgoSpec", "ConfigError", "Preset", "get", "multi_agent_names"]
