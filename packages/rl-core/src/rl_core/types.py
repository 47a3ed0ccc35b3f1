"""The data that crosses the port and the loops: plain NamedTuples, so every one is a pytree.

Shapes are given for one environment; a `VectorEnv` adds a leading `[N]` axis to every leaf and a
rollout a leading `[T]` axis on top of that (`[T, N, ...]`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax

# Entries of `TimeStep.info` that describe the state just reached rather than the transition that
# led to it. When `AutoReset` starts a new episode they must follow the *reset* observation (the
# legal moves of the new position), whereas everything else in `info` describes the step taken.
STATE_INFO_KEYS: tuple[str, ...] = ("action_mask",)


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


class TrainResult(NamedTuple):
    """What `train(key, hparams)` returns: the final carry and per-update metrics
    (a dict of arrays with leading axis `[num_updates]`, plus the member axis when vmapped)."""

    state: Any
    metrics: dict[str, Any]  # jax arrays, or host numpy arrays from `run_members`
