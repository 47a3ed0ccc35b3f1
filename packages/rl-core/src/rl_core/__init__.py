"""rl_core: the functional core of the framework (jax only).

Types that cross the port and the algorithm contract (`Algorithm`, `Agent`, `Policy`), spaces,
the environment port itself, wrappers written once for every backend, the `lax.scan` loops, the
multi-member driver (`members`), `parallel` (device meshes, data parallelism, several hosts), and
the two contracts as checks: `check_environment` and `check_algorithm`.
"""

from rl_core.env import CONTINUOUS_FAMILIES, FAMILIES, Environment
from rl_core.games import GameView, TurnBasedGame
from rl_core.loops import make_train, recurrent_rollout, rollout, scan_updates
from rl_core.members import (
    Checkpointing,
    ChunkReport,
    CompiledRun,
    MembersState,
    any_member,
    chunk_health,
    chunk_length,
    chunk_program,
    compile_members,
    map_members,
    run_members,
)
from rl_core.metrics import FINAL_RETURN_DEFINITION, FINAL_RETURN_WINDOW, final_return
from rl_core.multiagent import (
    agents_as_batch,
    agents_from_batch,
    check_multiagent_environment,
    episode_over,
)
from rl_core.multiagent_wrappers import AgentsAsBatch, CentralisedCritic
from rl_core.observations import (
    FlattenObservation,
    FlattenStructuredObservation,
    MaskObservation,
    flatten_observation,
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
from rl_core.resets import OptimisticResetVectorEnv
from rl_core.spaces import Box, Discrete, MultiDiscrete, Space, describe
from rl_core.testing import (
    AlgorithmContractError,
    EnvironmentContractError,
    check_algorithm,
    check_environment,
)
from rl_core.types import (
    EPISODE_METRICS,
    STATE_INFO_KEYS,
    ActFn,
    Agent,
    AgentFn,
    Algorithm,
    AlgorithmSpec,
    InitFn,
    Policy,
    RunnerState,
    StepFn,
    TimeStep,
    TrainResult,
    TrainState,
    Transition,
    UpdateFn,
    initial_policy_state,
    policy_step,
)
from rl_core.wrappers import (
    AnnealedRewardShaping,
    AutoReset,
    ClipAction,
    EpisodeStatistics,
    NormalizeObservation,
    NormalizeReward,
    PresetReset,
    RunningMeanStd,
    TimeStepMap,
    VectorEnv,
    Wrapper,
    find_state,
    normalize_observation,
)

__all__ = [
    "DATA_AXIS", "MEMBER_AXIS", "DataAxis", "DistributedConfig", "data_mesh", "data_parallel",
    "distributed_config", "initialize_distributed", "is_main_process", "member_mesh",
    "pad_members", "padded_size", "put_members", "to_host", "unpad_members",
    "CONTINUOUS_FAMILIES", "EPISODE_METRICS", "FAMILIES", "FINAL_RETURN_DEFINITION",
    "FINAL_RETURN_WINDOW", "final_return",
    "ActFn", "Agent", "AgentFn", "AlgorithmContractError", "AlgorithmSpec",
    "InitFn", "Policy", "UpdateFn", "check_algorithm", "find_state", "normalize_observation",
    "AgentsAsBatch", "Algorithm", "AnnealedRewardShaping", "AutoReset", "Box",
    "CentralisedCritic", "ChunkReport", "ClipAction", "CompiledRun",
    "Discrete",
    "Checkpointing", "MembersState",
    "Environment", "EnvironmentContractError", "EpisodeStatistics", "FlattenObservation",
    "GameView", "TurnBasedGame",
    "FlattenStructuredObservation",
    "MultiDiscrete", "NormalizeObservation", "NormalizeReward", "OptimisticResetVectorEnv",
    "PresetReset", "RunnerState",
    "RunningMeanStd",
    "STATE_INFO_KEYS", "Space", "TimeStep", "TimeStepMap", "TrainResult", "TrainState",
    "Transition", "VectorEnv",
    "Wrapper", "check_environment", "chunk_health", "chunk_length",
    "any_member", "chunk_program", "compile_members", "describe",
    "flatten_observation", "make_train", "map_members", "rollout", "run_members", "scan_updates",
    "MaskObservation", "StepFn", "initial_policy_state", "policy_step", "recurrent_rollout",
    "agents_as_batch", "agents_from_batch", "check_multiagent_environment", "episode_over",
]
