"""DQN's training program: `make_algorithm(env, config)` gives the `Algorithm` (init + one update).

One update: `num_steps` steps of `num_envs` environments, acting ε-greedily over the legal actions
(ε decays linearly from `eps_start` to `eps_finish` over the first `eps_decay` of the run), stored
in the on-device replay buffer shared with TD3 and SAC; then `gradient_steps` Adam steps (global
norm clipping), each on a fresh minibatch of n-step windows, towards the Double DQN (or DQN)
target of the target network; then, when the update crossed a multiple of
`target_update_interval` environment steps, the target network moves a Polyak step `tau` towards
the online one (`tau=1`: a copy). Nothing is learnt before `learning_starts` environment steps.

The buffer holds single transitions; an n-step window is `n` consecutive steps of one
environment, `num_envs` slots apart (`ReplayBuffer.sample_slots`), its return cut at the first
episode end, and its bootstrap observation (the true next observation of its last step, the
final one after a time limit) and that observation's legal actions gathered from the window's
last step only.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp

from rl_algos.common.carry import initial_carry, next_carry
from rl_algos.common.offpolicy import learn_after_warmup, polyak
from rl_algos.common.policy import agent_fn
from rl_algos.common.qvalues import check_spaces, epsilon_at, q_agent, q_policy
from rl_algos.common.replay import ReplayBuffer
from rl_algos.common.sgd import annealed_optimizer
from rl_algos.dqn.config import DQNConfig
from rl_algos.dqn.losses import double_q_target, n_step_return, td_loss
from rl_algos.dqn.networks import DQNNetwork
from rl_core import Algorithm, Policy, RunnerState, TrainResult, rollout
from rl_core import make_train as _make_train


class DQNExtras(NamedTuple):
    """DQN's own carry: the target network's parameters and the replay buffer's state."""

    target: Any
    buffer: Any


def q_network_model(env: Any, config: DQNConfig) -> Callable[[jax.Array], DQNNetwork]:
    """`key -> DQNNetwork` over the environment's own observation shape (an image gets the
    convolution when `cnn_channels` > 0)."""
    return partial(DQNNetwork, obs_shape=tuple(env.observation_space.shape),
                   num_actions=env.action_space.n, hidden_sizes=tuple(config.hidden_sizes),
                   cnn_channels=config.cnn_channels, activation=config.activation,
                   layer_norm=config.layer_norm, dueling=config.dueling)


def make_policy(env: Any, config: DQNConfig) -> Policy:
    """DQN's acting (the shared `q_policy`): greedy over the legal actions
    (`deterministic=True`), or ε-greedy with ε = `explore` (the schedule's value while training;
    0.05, the evaluation ε of Mnih et al., when None). The noise is a key."""
    check_spaces(env, "dqn")
    return q_policy(q_network_model(env, config))


def replay_example(env: Any, masked: bool) -> dict[str, jax.Array]:
    """One replay item of zeros: the observation (its own shape and dtype), the action, the
    reward, both episode-end flags, the true next observation and, for masked environments, the
    next observation's legal actions."""
    space = env.observation_space
    obs = jnp.zeros(tuple(space.shape), space.dtype)
    f = jnp.zeros((), jnp.bool_)
    item = {"obs": obs, "action": jnp.zeros((), jnp.int32), "reward": jnp.zeros((), jnp.float32),
            "terminated": f, "truncated": f, "next_obs": obs}
    if masked:
        item["next_mask"] = jnp.ones((env.action_space.n,), jnp.bool_)
    return item


def replay_items(traj: Any, masked: bool) -> dict[str, jax.Array]:
    """A rollout's `[T, N]` transitions as `T*N` items, time-major: environment `e`'s step `t` is
    item `t*N + e`, so its next step is `N` items later (what n-step windows rely on). The next
    mask is that of the true next state (`final_action_mask`: after an episode end
    `action_mask` is already the new episode's)."""
    items = {"obs": traj.observation, "action": traj.action.astype(jnp.int32),
             "reward": traj.reward.astype(jnp.float32), "terminated": traj.terminated,
             "truncated": traj.truncated, "next_obs": traj.next_observation}
    if masked:
        items["next_mask"] = traj.info.get("final_action_mask", traj.info["action_mask"])
    return jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), items)


def n_step_batch(buffer: ReplayBuffer, state: Any, first: jax.Array, n: int, stride: int,
                 gamma: jax.Array | float) -> dict[str, jax.Array]:
    """The n-step windows whose first items are at slots `first [B]` (`n` steps of one
    environment, `stride` = `num_envs` slots apart): the first step's `obs` and `action`, the
    `return` and bootstrap `discount` of `n_step_return`, and the true next observation
    `next_obs` (and `next_mask`, its legal actions, when stored) of the window's last step,
    gathered from that step alone."""
    exp = state.experience
    slots = buffer.window_slots(first, n, stride)  # [B, n]
    ret, discount, last = n_step_return(exp["reward"][slots], exp["terminated"][slots],
                                        exp["truncated"][slots], gamma)
    last_slot = jnp.take_along_axis(slots, last[:, None], axis=-1)[:, 0]
    out = {"obs": exp["obs"][first], "action": exp["action"][first], "return": ret,
           "discount": discount, "next_obs": exp["next_obs"][last_slot]}
    if "next_mask" in exp:
        out["next_mask"] = exp["next_mask"][last_slot]
    return out


def make_algorithm(env: Any, config: DQNConfig) -> Algorithm:
    """DQN on `env` (one unbatched environment implementing the port, Discrete actions)."""
    config.validate()
    check_spaces(env, "dqn")
    venv, make_model, policy, q_values, act = q_agent(env, q_network_model(env, config),
                                                      config.num_envs)
    num_updates, steps_per_update = config.num_updates, config.steps_per_update
    g, b, n, num_envs = config.gradient_steps, config.batch_size, config.n_step, config.num_envs
    buffer = ReplayBuffer(config.buffer_size, g * b)
    # Whether the environment has legal-action masks: its reset's info says (no compilation).
    _, ts0 = jax.eval_shape(env.reset, jax.random.PRNGKey(0))
    masked = "action_mask" in ts0.info

    optimizer = annealed_optimizer(config, steps_per_update=g)

    def init(key: jax.Array, hp: Any) -> RunnerState:
        return initial_carry(key, make_model, venv, optimizer(hp).init,
                             lambda p: DQNExtras(p, buffer.init(replay_example(env, masked))))

    def learn(hp: Any, params: Any, opt_state: Any, target: Any, buf: Any, first: jax.Array):
        tx = optimizer(hp)

        def step(state, first_b):
            params, opt_state = state
            mb = n_step_batch(buffer, buf, first_b, n, num_envs, hp.gamma)
            obs, action, next_obs, next_mask = (mb["obs"], mb["action"], mb["next_obs"],
                                                mb.get("next_mask"))
            ret, discount = mb["return"], mb["discount"]
            next_q_target = q_values(target, next_obs)
            next_q_online = q_values(params, next_obs) if config.double else next_q_target
            y = double_q_target(ret, discount, next_q_online, next_q_target, next_mask,
                                config.double)

            def loss_fn(p):
                q = q_values(p, obs)
                q_taken = jnp.take_along_axis(q, action[:, None], axis=-1)[:, 0]
                return td_loss(q_taken, y, config.loss)

            (_, metrics), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
            updates, opt_state = tx.update(grads, opt_state, params)
            return (eqx.apply_updates(params, updates), opt_state), metrics

        (params, opt_state), metrics = jax.lax.scan(step, (params, opt_state),
                                                    first.reshape(g, b))
        return params, opt_state, jax.tree.map(jnp.mean, metrics)

    def update(carry: RunnerState, hp: Any) -> tuple[RunnerState, dict[str, jax.Array]]:
        ts_, extras = carry.train_state, carry.extras
        eps = epsilon_at(ts_.step, num_updates, hp)
        key, k_roll, k_sample = jax.random.split(carry.key, 3)
        (env_state, timestep, _), traj = rollout(
            venv, partial(act, ts_.params, eps), carry.env_state, carry.timestep, k_roll,
            config.num_steps)
        buf = buffer.add(extras.buffer, replay_items(traj, masked))
        env_steps = (ts_.step + 1) * steps_per_update  # stored after this update's rollout
        learning = jnp.logical_and(env_steps >= config.learning_starts,
                                   buffer.num_windows(buf, n, num_envs) > 0)
        first = buffer.sample_slots(buf, k_sample, n, num_envs)
        operands = (ts_.params, ts_.opt_state, extras.target, buf, first)
        learnt = partial(learn, hp)

        params, opt_state, metrics = learn_after_warmup(learning, learnt, operands)
        # The target network moves when this update crossed a multiple of the interval.
        interval = config.target_update_interval
        crossed = env_steps // interval > (env_steps - steps_per_update) // interval
        move = jnp.logical_and(learning, crossed)
        # tau = 1 is an exact copy (t + 1 * (o - t) can differ from o in the last bit).
        target = jax.tree.map(
            lambda moved, new, old: jnp.where(move, jnp.where(hp.tau >= 1.0, new, moved), old),
            polyak(extras.target, params, hp.tau), params, extras.target)
        metrics = {**metrics, "epsilon": eps, "learning": learning.astype(jnp.float32)}
        return next_carry(carry, params, opt_state, (env_state, timestep, key),
                          DQNExtras(target, buf), traj, metrics)

    return Algorithm(init, update, num_updates, steps_per_update, agent_fn(venv), policy)


def make_train(env: Any, config: DQNConfig) -> Callable[[jax.Array, Any], TrainResult]:
    """`train(key, hparams) -> TrainResult`, pure: `jax.jit(jax.vmap(train))` trains many seeds."""
    return _make_train(make_algorithm(env, config))
