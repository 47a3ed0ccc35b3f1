"""rl_core: the functional core of the framework (jax only).

Types that cross the port, spaces, the environment port itself, wrappers written once for every
backend, the `lax.scan` loops, `parallel` (device meshes, data parallelism, several hosts), and
`check_environment`, the port's contract as a check.
"""

from rl_core.env import Environment
from rl_core.loops import (
    Algorithm,
    ChunkReport,
    CompiledRun,
    chunk_length,
    compile_members,
    make_train,
    map_members,
    rollout,
    run_members,
    scan_updates,
)
from rl_core.parallel import (
    DATA_AXIS,
    MEMBER_AXIS,
    DataAxis,
    DistributedConfig,
    data_mesh,
    data_parallel,
    distributed_config,
    initialize_distributed,
    is_main_process,
    member_mesh,
    pad_members,
    padded_size,
    put_members,
    to_host,
    unpad_members,
)
from rl_core.spaces import Box, Discrete, MultiDiscrete, Space, describe
from rl_core.testing import EnvironmentContractError, check_environment
from rl_core.types import (
    STATE_INFO_KEYS,
    RunnerState,
    TimeStep,
    TrainResult,
    TrainState,
    Transition,
)
from rl_core.wrappers import (
    AutoReset,
    ClipAction,
    EpisodeStatistics,
    FlattenObservation,
    FlattenStructuredObservation,
    NormalizeObservation,
    NormalizeReward,
    RunningMeanStd,
    VectorEnv,
    Wrapper,
    flatten_observation,
)

__all__ = [
    "DATA_AXIS", "MEMBER_AXIS", "DataAxis", "DistributedConfig", "data_mesh", "data_parallel",
    "distributed_config", "initialize_distributed", "is_main_process", "member_mesh",
    "pad_members", "padded_size", "put_members", "to_host", "unpad_members",
    "Algorithm", "AutoReset", "Box", "ChunkReport", "ClipAction", "CompiledRun", "Discrete",
    "Environment", "EnvironmentContractError", "EpisodeStatistics", "FlattenObservation",
    "FlattenStructuredObservation",
    "MultiDiscrete", "NormalizeObservation", "NormalizeReward", "RunnerState", "RunningMeanStd",
    "STATE_INFO_KEYS", "Space", "TimeStep", "TrainResult", "TrainState", "Transition", "VectorEnv",
    "Wrapper", "check_environment", "chunk_length", "compile_members", "describe",
    "flatten_observation", "make_train", "map_members", "rollout", "run_members", "scan_updates",
]
