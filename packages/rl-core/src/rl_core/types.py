"""The data that crosses the port and the loops: plain NamedTuples, so every one is a pytree.

Shapes are given for one environment; a `VectorEnv` adds a leading `[N]` axis to every leaf and a
rollout a leading `[T]` axis on top of that (`[T, N, ...]`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, Protocol

import jax

# Entries of `TimeStep.info` that describe the state just reached rather than the transition that
# led to it. When `AutoReset` starts a new episode they must follow the *reset* observation (the
# legal moves of the new position), whereas everything else in `info` describes the step taken.
# `alive` and `global_state` are the multi-agent port's (rl_core.multiagent): which agents are in
# the episode, and the state a centralised critic sees (kept as `final_global_state` to
# bootstrap a truncated episode from). `player` is a self-play board game's player to move (a new
# game's opener is drawn at its reset).
STATE_INFO_KEYS: tuple[str, ...] = ("action_mask", "alive", "global_state", "player")


class TimeStep(NamedTuple):
    """What an environment returns from `reset` and `step`.

    observation: pytree, usually float32 `[*obs_shape]`.
    reward:      float32 `[]` — reward for the transition that produced this step (0 at reset).
    terminated:  bool `[]` — the MDP ended (no bootstrapping from the next value).
    truncated:   bool `[]` — the episode was cut short (time limit): bootstrap from the value of the
                 true final observation, which `AutoReset` keeps in `info["final_observation"]`.
    info:        dict of arrays with the *same keys and dtypes at reset and at every step* (a scan
                 carries it). `info["action_mask"]` (bool `[num_actions]`) marks legal actions.
    """

    observation: Any
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    info: dict[str, Any]


class Transition(NamedTuple):
    """One step of experience as the loops store it (leading axes `[T, N]` after a rollout).

    next_observation is the true observation after `action` (the final one when an episode ended,
    never the reset observation), so a value bootstrap on truncation is always possible.
    extras holds what the policy computed while acting (log-probabilities, values, ...);
    info holds the environment's step info without `final_observation` (episode statistics, masks).
    """

    observation: Any
    action: jax.Array
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    next_observation: Any
    extras: dict[str, Any]
    info: dict[str, Any]


class TrainState(NamedTuple):
    """Learnable state of an agent: parameters (an Equinox/array pytree), optimiser state, and the
    number of gradient updates applied so far (int32 `[]`)."""

    params: Any
    opt_state: Any
    step: jax.Array


class RunnerState(NamedTuple):
    """The carry of an on-policy training loop: the agent, the (vectorised) environment and the
    key. `extras` is for algorithm-specific carry (a replay buffer, a normaliser, ...)."""

    train_state: TrainState
    env_state: Any
    timestep: TimeStep
    key: jax.Array
    extras: Any = None


# The metrics every `update` must return (scalars, summed over the episodes that ended during the
# update): the CLI's progress, logs and summaries read these and nothing else of an algorithm.
EPISODE_METRICS: tuple[str, ...] = ("episode_return_sum", "episode_length_sum", "episode_count")


class Agent(NamedTuple):
    """Everything needed to act: what a run saves and what `Policy.act` takes.

    params:   the learnt parameters (an Equinox/array pytree; a Q-table for tabular methods).
    obs_norm: the running observation statistics (`rl_core.RunningMeanStd`) the network was
              trained on, when training normalised observations, else None. Acting applies them
              to raw observations exactly as `NormalizeObservation` did during training."""

    params: Any
    obs_norm: Any = None


class InitFn(Protocol):
    """`init(key, hparams) -> carry`: the state before the first update. The carry is any pytree
    whose structure, shapes and dtypes never change across updates (a scan carries it)."""

    def __call__(self, key: jax.Array, hparams: Any, /) -> Any: ...


class UpdateFn(Protocol):
    """`update(carry, hparams) -> (carry, metrics)`: one update, pure. `metrics` is a dict of
    float32 scalars holding at least `EPISODE_METRICS`; names with a `/` (`loss/value`) group
    into TensorBoard sections."""

    def __call__(self, carry: Any, hparams: Any, /) -> tuple[Any, dict[str, jax.Array]]: ...


class AgentFn(Protocol):
    """`agent(carry) -> Agent`: the agent inside a carry (one member's)."""

    def __call__(self, carry: Any, /) -> Agent: ...


class ActFn(Protocol):
    """`act(agent, observation, noise, deterministic, mask=None, explore=None) -> (action,
    extras)` for a batch of `N` observations in the environment's own (raw) space:

    noise:         the randomness of this batch, as `Policy.noise(key, (N,))` draws it (a key, or
                   noise drawn up front for a whole rollout and sliced per step);
    deterministic: a Python bool; True gives the greedy action (most probable legal action,
                   arg-max Q, the actor's mean) and ignores `noise`;
    mask:          bool `[N, A]` legal actions or None; an illegal action is never chosen;
    explore:       the algorithm's exploration setting while training (PQN's ε, TD3's noise
                   scale), None for its evaluation default;
    extras:        what training needs besides the action (log-probabilities, values)."""

    def __call__(self, agent: Agent, observation: Any, noise: Any, deterministic: bool, /,
                 mask: jax.Array | None = None, explore: Any = None) -> tuple[jax.Array, Any]: ...


class StepFn(Protocol):
    """`step(agent, state, observation, first, noise, deterministic, mask=None, explore=None) ->
    (action, extras, state)`: `act` for a policy with memory (a recurrent network). `state` is
    the policy state of the batch (leaves `[N, ...]`, as `Policy.initial_state(N)` makes it);
    `first` (bool `[N]`) marks observations that begin a new episode: their state is reset to
    the initial state *before* the step. Returns the state to pass to the next step."""

    def __call__(self, agent: Agent, state: Any, observation: Any, first: jax.Array,
                 noise: Any, deterministic: bool, /, mask: jax.Array | None = None,
                 explore: Any = None) -> tuple[jax.Array, Any, Any]: ...


class Policy(NamedTuple):
    """An algorithm's one acting path, used by its training rollout and by evaluation.

    agent_like: one agent's structure (`jax.ShapeDtypeStruct` leaves): saved agents load into it.
    act:        see `ActFn`.
    noise:      `(key, batch_shape) -> noise` for `act`.
    initial_state, step: only for a policy with memory (both or neither): `initial_state(N)`
                the state of `N` fresh episodes (a pytree of `[N, ...]` arrays), and `step` (see
                `StepFn`) the action that carries it. Such a policy's `act` is `step` from the
                initial state (an episode's first action), so every caller of `act` still gets a
                valid action; whoever plays episodes (evaluation, rendering) carries the state
                through `step` (`policy_step`). A feed-forward policy leaves both None."""

    agent_like: Any
    act: ActFn
    noise: Callable[[jax.Array, tuple[int, ...]], Any]
    initial_state: Callable[[int], Any] | None = None
    step: StepFn | None = None


def initial_policy_state(policy: Policy, n: int) -> Any:
    """The state of `n` fresh episodes for `policy_step`: the policy's own, or None (an empty
    pytree) for a feed-forward policy."""
    return None if policy.initial_state is None else policy.initial_state(n)


def policy_step(policy: Policy, agent: Agent, state: Any, observation: Any, first: jax.Array,
                noise: Any, deterministic: bool, mask: jax.Array | None = None,
                explore: Any = None) -> tuple[jax.Array, Any, Any]:
    """One action of any policy, carrying its state: `policy.step` for a policy with memory,
    otherwise `policy.act` (the state, None, passes through unchanged and `first` is unused)."""
    if policy.step is None:
        action, extras = policy.act(agent, observation, noise, deterministic, mask, explore)
        return action, extras, state
    return policy.step(agent, state, observation, first, noise, deterministic, mask, explore)


class Algorithm(NamedTuple):
    """A training run cut into identical updates: the contract between an algorithm and the loops
    that drive it (`make_train`, the multi-member driver, data parallelism, the CLI).

    init:    `InitFn`, the state before the first update.
    update:  `UpdateFn`, one update; its metrics hold `EPISODE_METRICS`.
    num_updates: how many updates make the run.
    steps_per_update: environment steps one update consumes (per member).
    agent:   `AgentFn`, the agent inside a carry (what a run saves).
    policy:  the `Policy` the training rollout acts with; `make_policy(env, config)` rebuilds an
             equal one for evaluation from the run's config alone.

    `agent` and `policy` are required of every registered algorithm (`check_algorithm` checks
    them); the loops alone (`make_train`, the member driver) need only the first four fields.
    """

    init: InitFn
    update: UpdateFn
    num_updates: int
    steps_per_update: int
    agent: AgentFn | None = None
    policy: Policy | None = None


class AlgorithmSpec(Protocol):
    """What a registered algorithm declares (rl_algos' `AlgoSpec` is one): its config types, its
    builders, and its capabilities. `rl_core.testing.check_algorithm` checks one."""

    name: str
    config_cls: type
    hparams_cls: type
    action_spaces: tuple[type, ...]
    data_parallel: bool  # make_algorithm takes `data_axis` (one device's share of an agent)
    action_masks: bool  # acting respects `info["action_mask"]`

    def make_algorithm(self, env: Any, config: Any, **kwargs: Any) -> Algorithm: ...

    def make_policy(self, env: Any, config: Any) -> Policy: ...

    def default_hparams(self) -> Any: ...


class TrainResult(NamedTuple):
    """What `train(key, hparams)` returns: the final carry and per-update metrics
    (a dict of arrays with leading axis `[num_updates]`, plus the member axis when vmapped)."""

    state: Any
    metrics: dict[str, Any]  # jax arrays, or host numpy arrays from `run_members`
