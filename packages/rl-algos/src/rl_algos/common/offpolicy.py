"""What the off-policy continuous-control methods (TD3, SAC) share besides the replay buffer: the
config of an update (collect, then several gradient steps on sampled minibatches), the
check of a bounded vector Box, the actor/critic builders over the flattened observation, the
rescaling of [-1, 1] actions to the Box bounds, the uniform warm-up actions drawn from the
acting noise, the Polyak update of target networks, learning only after the warm-up
(`learn_after_warmup`, which DQN uses too), and the update itself (`replay_update`: collect,
store, sample, learn), around each method's own acting and learning arithmetic."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from rl_algos.common.carry import next_carry
from rl_algos.common.config import ConfigError, RolloutConfig, require, require_positive
from rl_algos.common.envs import make_vector_env
from rl_algos.common.networks import check_network
from rl_algos.common.policy import flat_size, model_structure
from rl_algos.common.replay import ReplayBuffer
from rl_core import (
    Agent,
    Box,
    Policy,
    RunnerState,
    TrainState,
    flatten_observation,
    rollout,
)


@dataclass(frozen=True)
class OffPolicyConfig(RolloutConfig):
    """One update collects `num_steps` steps of `num_envs` environments into the replay buffer,
    then takes `gradient_steps` steps, each on its own minibatch of `batch_size`; uniformly
    random actions and no learning for the first `learning_starts` environment steps. The
    update-to-data ratio is `gradient_steps / (num_envs * num_steps)`."""

    num_envs: int = 1
    num_steps: int = 1
    gradient_steps: int = 1
    batch_size: int = 256
    buffer_size: int = 1_000_000
    learning_starts: int = 5_000
    hidden_sizes: tuple[int, ...] = (256, 256)
    activation: str = "relu"

    @property
    def update_to_data(self) -> float:
        return self.gradient_steps / self.steps_per_update

    def validate(self) -> None:
        super().validate()
        require_positive(self, "gradient_steps", "batch_size", "buffer_size")
        require(self.learning_starts >= 0,
                f"learning_starts must be >= 0, got {self.learning_starts}")
        require(
            self.buffer_size >= max(self.steps_per_update, self.gradient_steps * self.batch_size),
            f"buffer_size={self.buffer_size} must hold one update's transitions "
            f"({self.steps_per_update}) and its gradient_steps*batch_size="
            f"{self.gradient_steps * self.batch_size} samples; raise buffer_size",
        )
        require(len(self.hidden_sizes) >= 1,
                f"hidden_sizes must be one or more positive sizes, got {self.hidden_sizes}")
        check_network(self.hidden_sizes, self.activation)


def check_action_space(space: Any, algo: str) -> Box:
    """A bounded vector Box; anything else is refused with the reason."""
    if not isinstance(space, Box):
        raise ConfigError(f"{algo} needs a Box (continuous) action space, got "
                          f"{type(space).__name__}; for discrete actions use 'ppo' or 'pqn'.")
    if len(space.shape) != 1:
        raise ConfigError(f"{algo} needs vector actions, got shape {space.shape}.")
    if not space.bounded:
        raise ConfigError(f"{algo} squashes actions into the Box bounds, which must be finite; "
                          f"this environment's are {space!r}.")
    return space


def actor_critic_makers(env: Any, config: OffPolicyConfig, actor_cls: type, critic_cls: type,
                        algo: str) -> tuple[Callable[[jax.Array], Any], Callable[[jax.Array], Any]]:
    """`key -> actor` and `key -> critic` (`cls(key, d_obs, d_action, hidden, activation)`) over
    the flattened observation of `env`; its spaces checked."""
    space = check_action_space(env.action_space, algo)
    if not isinstance(env.observation_space, Box):
        raise ConfigError(f"{algo} learns from Box observations, got "
                          f"{type(env.observation_space).__name__}.")
    kw = dict(d_obs=flat_size(env.observation_space), d_action=space.shape[0],
              hidden=tuple(config.hidden_sizes), activation=config.activation)
    return partial(actor_cls, **kw), partial(critic_cls, **kw)


class OffPolicySetup(NamedTuple):
    """What an off-policy `make_algorithm` builds before its functions: the network builders and
    their static parts, the vectorised environments, the replay buffer (sampling every minibatch
    of an update in one draw) and the action dimension."""

    make_actor: Callable[[jax.Array], Any]
    make_critic: Callable[[jax.Array], Any]
    actor_static: Any
    critic_static: Any
    venv: Any
    buffer: ReplayBuffer
    d_act: int


def off_policy_setup(env: Any, config: OffPolicyConfig,
                     makers: tuple[Callable[[jax.Array], Any], Callable[[jax.Array], Any]]
                     ) -> OffPolicySetup:
    make_actor, make_critic = makers
    buffer = ReplayBuffer(config.buffer_size, config.gradient_steps * config.batch_size)
    return OffPolicySetup(make_actor, make_critic, model_structure(make_actor)[1],
                          model_structure(make_critic)[1], make_vector_env(env, config.num_envs),
                          buffer, int(env.action_space.shape[0]))


class BoxActions:
    """Actions in [-1, 1] mapped to a Box's bounds, and the acting noise: standard normals
    `[*batch, A]`, which also give the warm-up's uniform actions."""

    def __init__(self, space: Box):
        self.loc = jnp.asarray((space.high + space.low) / 2, jnp.float32)
        self.half_range = jnp.asarray((space.high - space.low) / 2, jnp.float32)
        self.dim = int(space.shape[0])

    def to_env(self, unit: jax.Array) -> jax.Array:
        return self.loc + self.half_range * unit

    def noise(self, key: jax.Array, shape: tuple[int, ...]) -> jax.Array:
        return jax.random.normal(key, (*shape, self.dim))


def box_policy(env: Any, makers: tuple[Callable[[jax.Array], Any], Callable[[jax.Array], Any]],
               unit_action: Callable[..., jax.Array],
               params_like: Callable[[Any, Any], Any]) -> Policy:
    """The acting of an actor over a bounded Box (TD3's, SAC's): `unit_action(actor, obs [N, D],
    noise [N, A], deterministic, explore) -> [N, A]` in [-1, 1] from the actor network and the
    flattened observations, rescaled to the Box bounds; its extras are that `unit_action`, which
    the replay buffer stores. The agent's structure is `params_like(actor_like, critic_like)`;
    the noise is `BoxActions.noise`'s standard normals."""
    make_actor, make_critic = makers
    actor_like, actor_static = model_structure(make_actor)
    critic_like = model_structure(make_critic)[0]
    box = BoxActions(env.action_space)

    def act(agent: Agent, obs: Any, noise: jax.Array, deterministic: bool,
            mask: jax.Array | None = None, explore: Any = None) -> tuple[jax.Array, Any]:
        actor = eqx.combine(agent.params.actor, actor_static)
        unit = unit_action(actor, flatten_observation(obs, 1), noise, deterministic, explore)
        return box.to_env(unit), {"unit_action": unit}

    return Policy(Agent(params_like(actor_like, critic_like)), act, box.noise)


def uniform_from_normal(z: jax.Array) -> jax.Array:
    """`erf(z / sqrt 2) = 2 Phi(z) - 1 ~ U(-1, 1)` for a standard normal `z`: the warm-up's
    uniform action from the same draw as the exploration noise (the two are never both used)."""
    return jax.lax.erf(z / np.sqrt(2.0)).astype(jnp.float32)


def replay_example(env: Any) -> dict[str, jax.Array]:
    """One replay item of zeros (what `ReplayBuffer.init` needs): the flattened observation, the
    action in [-1, 1], the reward, the termination flag and the true next observation."""
    obs = jnp.zeros((flat_size(env.observation_space),), jnp.float32)
    return {"obs": obs, "action": jnp.zeros((env.action_space.shape[0],), jnp.float32),
            "reward": jnp.zeros((), jnp.float32), "terminated": jnp.zeros((), jnp.bool_),
            "next_obs": obs}


def replay_items(traj: Any) -> dict[str, jax.Array]:
    """A rollout's `[T, N]` transitions as `T*N` replay items (the acting policy's
    `unit_action` extras are the stored actions). Only termination is kept: a truncated
    transition has its true final observation as `next_obs` and bootstraps from it."""
    f32 = jnp.float32
    items = {"obs": traj.observation.astype(f32), "action": traj.extras["unit_action"],
             "reward": traj.reward.astype(f32), "terminated": traj.terminated,
             "next_obs": traj.next_observation.astype(f32)}
    return jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), items)


def polyak(target: Any, online: Any, tau: jax.Array) -> Any:
    """`target <- tau * online + (1 - tau) * target`, leaf by leaf."""
    return jax.tree.map(lambda t, o: t + tau * (o - t), target, online)


def learn_after_warmup(learning: jax.Array, learn: Callable[..., tuple], operands: tuple
                       ) -> tuple:
    """`learn(*operands)` once `learning` (past `learning_starts`), else the first outputs handed
    back unchanged (the operands in the same places: parameters, optimiser state, targets) with
    zero metrics shaped like `learn`'s (its last output). Under vmap (many members) `cond`
    computes both branches and selects; the warm-up is a small share of a run."""
    like = jax.eval_shape(learn, *operands)

    def skip(*ops: Any) -> tuple:
        zeros = jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), like[-1])
        return (*ops[:len(like) - 1], zeros)

    return jax.lax.cond(learning, learn, skip, *operands)


class ReplayExtras(NamedTuple):
    """An off-policy method's own carry: its target networks and the replay buffer's state."""

    target: Any
    buffer: Any


def replay_init(env: Any, setup: OffPolicySetup, make_params: Callable[[Any, Any, Any], Any],
                optimizers: Callable[[Any], tuple], target_of: Callable[[Any], Any]
                ) -> Callable[[jax.Array, Any], RunnerState]:
    """`init(key, hp) -> RunnerState` of a replay-buffer method: the parameters
    `make_params(actor, critic, hp)` (the networks' array leaves), one optimiser state per
    parameter field (`optimizers(hp)`, in field order), the environments reset, and the carry's
    `ReplayExtras(target_of(params), empty buffer)`."""

    def init(key: jax.Array, hp: Any) -> RunnerState:
        k_actor, k_critic, k_env, k_run = jax.random.split(key, 4)
        params = make_params(eqx.filter(setup.make_actor(k_actor), eqx.is_array),
                             eqx.filter(setup.make_critic(k_critic), eqx.is_array), hp)
        opt_state = tuple(tx.init(p) for tx, p in zip(optimizers(hp), params, strict=True))
        env_state, ts = setup.venv.reset(k_env)
        extras = ReplayExtras(target_of(params), setup.buffer.init(replay_example(env)))
        return RunnerState(TrainState(params, opt_state, jnp.zeros((), jnp.int32)), env_state,
                           ts, k_run, extras)

    return init


def replay_update(config: OffPolicyConfig, setup: OffPolicySetup, act: Callable[..., Any],
                  learn: Callable[..., tuple], batch_lead: tuple[int, ...],
                  noise_lead: tuple[int, ...]) -> Callable[[RunnerState, Any], Any]:
    """One update of a replay-buffer method, `update(carry, hp) -> (carry, metrics)`:
    `num_steps` steps of `num_envs` environments acting with `act(params, exploring, hp,
    timestep, z) -> (action, extras)` (`exploring` during the warm-up, `z [N, A]` standard
    normals), stored; `gradient_steps * batch_size` items sampled and shaped `[*batch_lead,
    batch_size, ...]`; then, past `learning_starts`, `learn(hp, params, opt_state, target,
    batches, z) -> (params, opt_state, target, metrics)` with `z [*noise_lead, batch_size, A]`
    the learning's standard normals. The carry's extras are a `ReplayExtras`.

    Every standard normal of the update comes from one draw, the acting noise first: on the CPU
    a threefry call is a rolled loop costing microseconds however small."""
    venv, buffer, d_act = setup.venv, setup.buffer, setup.d_act
    n_explore = config.num_steps * config.num_envs * d_act
    n_learn = int(np.prod(noise_lead)) * config.batch_size * d_act
    steps_per_update = config.steps_per_update

    def update(carry: RunnerState, hp: Any) -> tuple[RunnerState, dict[str, jax.Array]]:
        ts_, extras = carry.train_state, carry.extras
        # Random actions and no learning until `learning_starts` environment steps are stored.
        learning = ts_.step * steps_per_update >= config.learning_starts
        key, k_roll, k_sample, k_noise = jax.random.split(carry.key, 4)
        z = jax.random.normal(k_noise, (n_explore + n_learn,))
        (env_state, timestep, _), traj = rollout(
            venv, partial(act, ts_.params, jnp.logical_not(learning), hp),
            carry.env_state, carry.timestep, k_roll, config.num_steps,
            policy_inputs=z[:n_explore].reshape(config.num_steps, config.num_envs, d_act))
        buf = buffer.add(extras.buffer, replay_items(traj))
        batches = jax.tree.map(lambda x: x.reshape(*batch_lead, config.batch_size, *x.shape[1:]),
                               buffer.sample(buf, k_sample))
        operands = (ts_.params, ts_.opt_state, extras.target, batches,
                    z[n_explore:].reshape(*noise_lead, config.batch_size, d_act))
        params, opt_state, target, metrics = learn_after_warmup(learning, partial(learn, hp),
                                                                operands)
        metrics = {**metrics, "learning": learning.astype(jnp.float32)}
        return next_carry(carry, params, opt_state, (env_state, timestep, key),
                          ReplayExtras(target, buf), traj, metrics)

    return update
