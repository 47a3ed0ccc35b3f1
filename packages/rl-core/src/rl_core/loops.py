"""`lax.scan` loops shared by every algorithm: the rollout, and the run as a scan of updates.

An algorithm is described by an `Algorithm` (`rl_core.types`): `init(key, hparams) -> carry` and
`update(carry, hparams) -> (carry, metrics)`, applied `num_updates` times. `make_train(algo)` makes
the whole run one pure function `train(key, hparams) -> TrainResult`, for users who
`jax.jit(jax.vmap(train))` it themselves; `rl_core.members` drives the same updates for many
members in compiled chunks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax

from rl_core.resets import OptimisticResetVectorEnv
from rl_core.types import Algorithm, TimeStep, TrainResult, Transition
from rl_core.wrappers import AutoReset, PresetReset, VectorEnv, Wrapper

Policy = Callable[[TimeStep, jax.Array], tuple[jax.Array, dict[str, Any]]]
StatefulPolicy = Callable[[TimeStep, Any, Any], tuple[jax.Array, dict[str, Any], Any]]


def rollout(
    env: Any,
    policy: Policy,
    env_state: Any,
    timestep: TimeStep,
    key: jax.Array,
    num_steps: int,
    unroll: int = 1,
    policy_inputs: Any = None,
    precompute_resets: bool = False,
) -> tuple[tuple[Any, TimeStep, jax.Array], Transition]:
    """Steps `env` (usually a `VectorEnv`) `num_steps` times with `policy(timestep, key) ->
    (action, extras)`. Returns the final `(env_state, timestep, key)` and a `Transition` whose
    leaves have a leading `[num_steps]` axis. `next_observation` is `info["final_observation"]`
    when the environment provides it (`AutoReset`), so truncated episodes can be bootstrapped.

    Randomness is drawn up front, for all steps at once: on CPU every `jax.random` call inside a
    step runs as a loop of tiny operations, which costs more than a small step's arithmetic. The
    environments' keys are split to the stack's `step_key_shape` (one key per environment, and per
    `AutoReset` one for the step and one for the reset) in one call. With `policy_inputs` (a
    pytree with a leading `[num_steps]` axis, e.g. the sampling noise of every step drawn at
    once) the policy receives its step's slice instead of a key. `unroll` goes to `lax.scan`.

    With `precompute_resets` (a stack whose `AutoReset` sits directly under its `VectorEnv`, as
    `make_vector_env` builds it) the resets of every step are computed before the scan, in one
    call batched over `[num_steps, N]`, and handed to `AutoReset` (`PresetReset`): the same
    resets (`AutoReset` computes one at every step anyway, and keeps it where an episode ended),
    without the reset's random-number loop inside each step, at the memory of `num_steps x N`
    reset states. Batched over more environments, a reset whose arithmetic has reductions may
    round differently."""
    (_, env_state, timestep, key), traj = _rollout(
        env, lambda ts, x, state: (*policy(ts, x), state), None, env_state, timestep, key,
        num_steps, unroll, policy_inputs, precompute_resets)
    return (env_state, timestep, key), traj


def recurrent_rollout(
    env: Any,
    policy: StatefulPolicy,
    policy_state: Any,
    env_state: Any,
    timestep: TimeStep,
    key: jax.Array,
    num_steps: int,
    unroll: int = 1,
    policy_inputs: Any = None,
) -> tuple[tuple[Any, Any, TimeStep, jax.Array], Transition]:
    """`rollout` for a policy with memory: `policy(timestep, x, state) -> (action, extras,
    state)`, the policy state (a recurrent network's hidden state, leaves `[N, ...]`) carried
    from step to step. The policy resets it where `timestep` begins a new episode
    (`terminated | truncated` of the step that led to it, `AutoReset` having already reset the
    environment). Returns the final `(policy_state, env_state, timestep, key)` and the
    `Transition`s, exactly as `rollout` does otherwise."""
    return _rollout(env, policy, policy_state, env_state, timestep, key, num_steps, unroll,
                    policy_inputs)


def _rollout(env: Any, policy: StatefulPolicy, policy_state: Any, env_state: Any,
             timestep: TimeStep, key: jax.Array, num_steps: int, unroll: int,
             policy_inputs: Any, precompute_resets: bool = False,
             ) -> tuple[tuple[Any, Any, TimeStep, jax.Array], Transition]:
    """The scan of both rollouts; a feed-forward policy's state is None (no leaves), so its
    program is the same as without one."""

    def one_step(carry, xs):
        policy_state, env_state, ts = carry
        policy_x, env_key = xs
        action, extras, policy_state = policy(ts, policy_x, policy_state)
        env_state, nts = env.step(env_state, action, env_key)
        info = dict(nts.info)
        next_obs = info.pop("final_observation", nts.observation)
        tr = Transition(
            observation=ts.observation,
            action=action,
            reward=nts.reward,
            terminated=nts.terminated,
            truncated=nts.truncated,
            next_observation=next_obs,
            extras=extras,
            info=info,
        )
        return (policy_state, env_state, nts), tr

    key, k_policy, k_env = jax.random.split(key, 3)
    shape = tuple(getattr(env, "step_key_shape", ()))
    env_keys = jax.random.split(k_env, num_steps * math.prod(shape)).reshape(
        num_steps, *shape, *key.shape)
    if policy_inputs is None:
        policy_inputs = jax.random.split(k_policy, num_steps)
    step_keys: Any = _preset_resets(env, env_keys) if precompute_resets else env_keys
    (policy_state, env_state, timestep), traj = jax.lax.scan(
        one_step, (policy_state, env_state, timestep), (policy_inputs, step_keys), unroll=unroll
    )
    return (policy_state, env_state, timestep, key), traj


def _preset_resets(env: Any, env_keys: jax.Array) -> PresetReset | jax.Array:
    """`env_keys [T, N, 2, ...]` (the rollout's step keys for `env`'s stack) with every step's
    reset computed: `AutoReset`'s wrapped environment reset with each `[..., 1]` key. A stack
    with optimistic resets computes its few resets in its step: its keys are returned as
    they are."""
    vec = env
    while isinstance(vec, Wrapper) and not isinstance(vec, VectorEnv | OptimisticResetVectorEnv):
        vec = vec.env
    if isinstance(vec, OptimisticResetVectorEnv):  # its few resets are computed in its step
        return env_keys
    if not (isinstance(vec, VectorEnv) and isinstance(vec.env, AutoReset)):
        raise ValueError("rollout(precompute_resets=True) needs a stack with AutoReset directly "
                         f"under its VectorEnv (rl_algos' make_vector_env builds one), got {env!r}")
    state, ts = jax.vmap(jax.vmap(vec.env.env.reset))(env_keys[:, :, 1])
    return PresetReset(env_keys, state, ts)


def scan_updates(algo: Algorithm, carry: Any, hparams: Any, length: int) -> tuple[Any, Any]:
    """`length` updates in one `lax.scan`; metrics get a leading `[length]` axis."""
    return jax.lax.scan(lambda c, _: algo.update(c, hparams), carry, None, length=length)


def make_train(algo: Algorithm) -> Callable[[jax.Array, Any], TrainResult]:
    """The whole run as a pure function `train(key, hparams) -> TrainResult`."""

    def train(key: jax.Array, hparams: Any) -> TrainResult:
        carry = algo.init(key, hparams)
        carry, metrics = scan_updates(algo, carry, hparams, algo.num_updates)
        return TrainResult(carry, metrics)

    return train
