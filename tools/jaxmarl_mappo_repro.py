"""Recurrent MAPPO restated from JaxMARL, as one file, to compare against: the whole training run
(rollout of every ally through the actor's and the critic's GRUs, GAE, minibatch epochs over
whole sequences) is one pure function of a PRNG key, run as
`jax.jit(jax.vmap(make_train(config)))(keys)`.

It restates JaxMARL's `baselines/MAPPO/mappo_rnn_smax.py` with its config
`baselines/MAPPO/config/mappo_homogenous_rnn_smax.yaml` (`CONFIG` below: HeuristicEnemySMAX on
2s3z, 128 envs x 128 steps, 4 epochs x 4 minibatches, lr 2e-3 annealed, a ReLU layer of 128, a
GRU of 128 and a ReLU head of 128 for the actor and for the critic, gamma 0.99, lambda 0.95, clip
0.2, no entropy bonus, value 0.5, grad-norm 0.25, 1e7 environment steps) from
github.com/FLAIROx/JaxMARL (commit c793d09): Rutherford et al., "JaxMARL: Multi-Agent RL
Environments and Algorithms in JAX", NeurIPS 2024 Datasets and Benchmarks, arXiv:2311.10090.
The environment is the installed `jaxmarl` package (0.2.0): `HeuristicEnemySMAX` with the yaml's
keywords (the enemy attacks the closest unit, units see the enemies' actions, walls kill) under
theirs' `SMAXWorldStateWrapper` (the critic's input: the world state and the ally's one-hot id)
and JaxMARL's `SMAXLogWrapper`.
The networks (`ActorRNN`, `CriticRNN`: orthogonal initialisers, flax's `GRUCell` reset where an
ally's previous step was done, unavailable actions' logits lowered by 1e10, a distrax
Categorical), the two optimisers (each clip_by_global_norm then Adam with eps 1e-5 on their
linear schedule), `batchify` / `unbatchify` in their agent-major order, GAE on the battle's end
(`done["__all__"]`, `unroll=16`), the minibatches of whole actor sequences (a permutation of the
actors), the two losses and the order of the PRNG splits follow theirs line for line.

What differs from theirs:
- No wandb, hydra, and no `jax.experimental.io_callback` that hands every update's metrics to
  wandb: `train` returns, per update, the means of the loss terms and of the info dict over the
  rollout, stacked over updates by the same `lax.scan`. `make_train` works on a copy of the
  config instead of writing NUM_ACTORS, NUM_UPDATES and MINIBATCH_SIZE into the caller's dict.
- Their initial hidden states are `initialize_carry(NUM_ACTORS, 128)`, 128 written out where the
  yaml's GRU_HIDDEN_DIM is meant; here GRU_HIDDEN_DIM (128 in `CONFIG`).
- Additions: per-update metrics `episode_return_sum`, `episode_count` and `episode_won_sum` (over
  the rollout's steps and environments, of the battles that ended: the team return, the sum of
  the allies' `returned_episode_returns`, and `returned_won_episode`), with which `final_return`
  and `final_win_rate` read the last 5% of updates as `rl_core.final_return` does; and a key
  SEQ_ORTHOGONAL (False in `CONFIG`): True wraps every orthogonal initialiser (the GRU's
  recurrent kernel's too) in `jax.custom_batching.sequential_vmap`, the same weights drawn one
  seed at a time, which avoids the batched-QR deadlock of jax 0.10.2 on CPU under `vmap` over
  seeds (docs/stress-many-seeds.md), as ours does.

Their own logged figures are agent 0's `returned_episode_returns` and `returned_won_episode`
over the steps where a battle ended: one ally's return (half a won battle's team return is
not) and the win rate. `final_win_rate` is that win rate.

    uv run --group bench python tools/jaxmarl_mappo_repro.py [--map 2s3z] [--seeds 1]
        [--timesteps T] [--seed 0] [--seq-orthogonal]
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import distrax
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax.linen.initializers import constant
from flax.training.train_state import TrainState
from jaxmarl.environments.smax import HeuristicEnemySMAX, map_name_to_scenario
from jaxmarl.wrappers.baselines import JaxMARLWrapper, SMAXLogWrapper

sys.path.insert(0, str(Path(__file__).resolve().parent))
from jaxmarl_ippo_repro import (  # noqa: E402
    FINAL_WINDOW,
    ortho,
    unbatchify,
    window_sum,
    with_timesteps,
)
from learning_report import timed_compile  # noqa: E402

# baselines/MAPPO/config/mappo_homogenous_rnn_smax.yaml (wandb keys left out).
CONFIG: dict[str, Any] = {
    "LR": 0.002,
    "NUM_ENVS": 128,
    "NUM_STEPS": 128,
    "TOTAL_TIMESTEPS": 10_000_000,  # 1e7
    "FC_DIM_SIZE": 128,
    "GRU_HIDDEN_DIM": 128,
    "UPDATE_EPOCHS": 4,
    "NUM_MINIBATCHES": 4,
    "GAMMA": 0.99,
    "GAE_LAMBDA": 0.95,
    "CLIP_EPS": 0.2,
    "SCALE_CLIP_EPS": False,
    "ENT_COEF": 0.0,
    "VF_COEF": 0.5,
    "MAX_GRAD_NORM": 0.25,
    "ACTIVATION": "relu",
    "OBS_WITH_AGENT_ID": True,
    "ENV_NAME": "HeuristicEnemySMAX",
    "MAP_NAME": "2s3z",
    "SEED": 0,
    "ENV_KWARGS": {"see_enemy_actions": True, "walls_cause_death": True,
                   "attack_mode": "closest"},
    "ANNEAL_LR": True,
    "SEQ_ORTHOGONAL": False,  # not theirs (see the module docstring)
}


class SMAXWorldStateWrapper(JaxMARLWrapper):
    """Theirs: `obs["world_state"]` `[A, state_size + A]`, the environment's world state repeated
    for every ally with the ally's one-hot id after it (the centralised critic's input)."""

    def __init__(self, env: HeuristicEnemySMAX, obs_with_agent_id: bool = True):
        super().__init__(env)
        self.obs_with_agent_id = obs_with_agent_id
        if not obs_with_agent_id:
            self._world_state_size = self._env.state_size
            self.world_state_fn = self.ws_just_env_state
        else:
            self._world_state_size = self._env.state_size + self._env.num_allies
            self.world_state_fn = self.ws_with_agent_id

    @functools.partial(jax.jit, static_argnums=0)
    def reset(self, key: jax.Array) -> tuple[dict[str, jax.Array], Any]:
        obs, env_state = self._env.reset(key)
        obs["world_state"] = self.world_state_fn(obs, env_state)
        return obs, env_state

    @functools.partial(jax.jit, static_argnums=0)
    def step(self, key: jax.Array, state: Any, action: dict[str, jax.Array]) -> tuple:
        obs, env_state, reward, done, info = self._env.step(key, state, action)
        obs["world_state"] = self.world_state_fn(obs, state)
        return obs, env_state, reward, done, info

    def ws_just_env_state(self, obs: dict[str, jax.Array], state: Any) -> jax.Array:
        return obs["world_state"][None].repeat(self._env.num_allies, axis=0)

    def ws_with_agent_id(self, obs: dict[str, jax.Array], state: Any) -> jax.Array:
        world_state = obs["world_state"][None].repeat(self._env.num_allies, axis=0)
        return jnp.concatenate((world_state, jnp.eye(self._env.num_allies)), axis=1)

    def world_state_size(self) -> int:
        return self._world_state_size


class ScannedRNN(nn.Module):
    """Theirs: a `GRUCell` scanned over time, its state reset to zeros where `resets`."""

    seq_orthogonal: bool = False

    @functools.partial(nn.scan, variable_broadcast="params", in_axes=0, out_axes=0,
                       split_rngs={"params": False})
    @nn.compact
    def __call__(self, carry: jax.Array, x: tuple[jax.Array, jax.Array]) -> tuple:
        rnn_state = carry
        ins, resets = x
        rnn_state = jnp.where(resets[:, np.newaxis],
                              self.initialize_carry(ins.shape[0], ins.shape[1]), rnn_state)
        extra = {"recurrent_kernel_init": ortho(1.0, True)} if self.seq_orthogonal else {}
        new_rnn_state, y = nn.GRUCell(features=ins.shape[1], **extra)(rnn_state, ins)
        return new_rnn_state, y

    @staticmethod
    def initialize_carry(batch_size: int, hidden_size: int) -> jax.Array:
        cell = nn.GRUCell(features=hidden_size)
        return cell.initialize_carry(jax.random.PRNGKey(0), (batch_size, hidden_size))


class ActorRNN(nn.Module):
    """Theirs: Dense(FC) -> relu -> GRU -> Dense(GRU_HIDDEN) -> relu -> logits, unavailable
    actions' logits lowered by 1e10."""

    action_dim: int
    config: dict[str, Any]

    @nn.compact
    def __call__(self, hidden: jax.Array, x: tuple) -> tuple[jax.Array, distrax.Categorical]:
        obs, dones, avail_actions = x
        seq = self.config.get("SEQ_ORTHOGONAL", False)
        embedding = nn.Dense(self.config["FC_DIM_SIZE"], kernel_init=ortho(np.sqrt(2), seq),
                             bias_init=constant(0.0))(obs)
        embedding = nn.relu(embedding)
        hidden, embedding = ScannedRNN(seq)(hidden, (embedding, dones))
        actor_mean = nn.Dense(self.config["GRU_HIDDEN_DIM"], kernel_init=ortho(2, seq),
                              bias_init=constant(0.0))(embedding)
        actor_mean = nn.relu(actor_mean)
        actor_mean = nn.Dense(self.action_dim, kernel_init=ortho(0.01, seq),
                              bias_init=constant(0.0))(actor_mean)
        action_logits = actor_mean - ((1 - avail_actions) * 1e10)
        return hidden, distrax.Categorical(logits=action_logits)


class CriticRNN(nn.Module):
    """Theirs: the actor's shape on the world state, a value head orthogonal(1.0)."""

    config: dict[str, Any]

    @nn.compact
    def __call__(self, hidden: jax.Array, x: tuple) -> tuple[jax.Array, jax.Array]:
        world_state, dones = x
        seq = self.config.get("SEQ_ORTHOGONAL", False)
        embedding = nn.Dense(self.config["FC_DIM_SIZE"], kernel_init=ortho(np.sqrt(2), seq),
                             bias_init=constant(0.0))(world_state)
        embedding = nn.relu(embedding)
        hidden, embedding = ScannedRNN(seq)(hidden, (embedding, dones))
        critic = nn.Dense(self.config["GRU_HIDDEN_DIM"], kernel_init=ortho(2, seq),
                          bias_init=constant(0.0))(embedding)
        critic = nn.relu(critic)
        critic = nn.Dense(1, kernel_init=ortho(1.0, seq), bias_init=constant(0.0))(critic)
        return hidden, jnp.squeeze(critic, axis=-1)


class Transition(NamedTuple):
    global_done: jax.Array
    done: jax.Array
    action: jax.Array
    value: jax.Array
    reward: jax.Array
    log_prob: jax.Array
    obs: jax.Array
    world_state: jax.Array
    info: dict[str, jax.Array]
    avail_actions: jax.Array


def batchify(x: dict[str, jax.Array], agent_list: list[str], num_actors: int) -> jax.Array:
    """Agents stacked first: `[A, E, ...]` -> `[A * E, -1]` (actor `i` is agent `i // E`)."""
    return jnp.stack([x[a] for a in agent_list]).reshape((num_actors, -1))


def make_train(config: dict[str, Any]) -> Callable[[jax.Array], dict[str, Any]]:
    """The whole MAPPO run as a pure function of a PRNG key: returns {"runner_state",
    "metrics"}, metrics stacked over the NUM_UPDATES updates."""
    config = dict(config)
    scenario = map_name_to_scenario(config["MAP_NAME"])
    env = HeuristicEnemySMAX(scenario=scenario, **config["ENV_KWARGS"])
    config["NUM_ACTORS"] = env.num_agents * config["NUM_ENVS"]
    config["NUM_UPDATES"] = config["TOTAL_TIMESTEPS"] // config["NUM_STEPS"] // config["NUM_ENVS"]
    config["MINIBATCH_SIZE"] = (
        config["NUM_ACTORS"] * config["NUM_STEPS"] // config["NUM_MINIBATCHES"])
    config["CLIP_EPS"] = (config["CLIP_EPS"] / env.num_agents if config["SCALE_CLIP_EPS"]
                          else config["CLIP_EPS"])
    env = SMAXWorldStateWrapper(env, config["OBS_WITH_AGENT_ID"])
    env = SMAXLogWrapper(env)
    hidden_dim = config["GRU_HIDDEN_DIM"]

    def linear_schedule(count: jax.Array) -> jax.Array:
        frac = (1.0 - (count // (config["NUM_MINIBATCHES"] * config["UPDATE_EPOCHS"]))
                / config["NUM_UPDATES"])
        return config["LR"] * frac

    def optimiser() -> optax.GradientTransformation:
        lr = linear_schedule if config["ANNEAL_LR"] else config["LR"]
        return optax.chain(optax.clip_by_global_norm(config["MAX_GRAD_NORM"]),
                           optax.adam(learning_rate=lr, eps=1e-5))

    def train(rng: jax.Array) -> dict[str, Any]:
        # INIT NETWORK
        actor_network = ActorRNN(env.action_space(env.agents[0]).n, config=config)
        critic_network = CriticRNN(config=config)
        rng, _rng_actor, _rng_critic = jax.random.split(rng, 3)
        n_envs = config["NUM_ENVS"]
        ac_init_x = (jnp.zeros((1, n_envs, env.observation_space(env.agents[0]).shape[0])),
                     jnp.zeros((1, n_envs)),
                     jnp.zeros((1, n_envs, env.action_space(env.agents[0]).n)))
        ac_init_hstate = ScannedRNN.initialize_carry(n_envs, hidden_dim)
        actor_network_params = actor_network.init(_rng_actor, ac_init_hstate, ac_init_x)
        cr_init_x = (jnp.zeros((1, n_envs, env.world_state_size())), jnp.zeros((1, n_envs)))
        cr_init_hstate = ScannedRNN.initialize_carry(n_envs, hidden_dim)
        critic_network_params = critic_network.init(_rng_critic, cr_init_hstate, cr_init_x)
        actor_train_state = TrainState.create(apply_fn=actor_network.apply,
                                              params=actor_network_params, tx=optimiser())
        critic_train_state = TrainState.create(apply_fn=critic_network.apply,
                                               params=critic_network_params, tx=optimiser())

        # INIT ENV
        rng, _rng = jax.random.split(rng)
        reset_rng = jax.random.split(_rng, n_envs)
        obsv, env_state = jax.vmap(env.reset, in_axes=(0,))(reset_rng)
        ac_init_hstate = ScannedRNN.initialize_carry(config["NUM_ACTORS"], hidden_dim)
        cr_init_hstate = ScannedRNN.initialize_carry(config["NUM_ACTORS"], hidden_dim)

        # TRAIN LOOP
        def _update_step(update_runner_state: tuple, unused: None) -> tuple:
            # COLLECT TRAJECTORIES
            runner_state, update_steps = update_runner_state

            def _env_step(runner_state: tuple, unused: None) -> tuple[tuple, Transition]:
                train_states, env_state, last_obs, last_done, hstates, rng = runner_state

                # SELECT ACTION
                rng, _rng = jax.random.split(rng)
                avail_actions = jax.vmap(env.get_avail_actions)(env_state.env_state)
                avail_actions = jax.lax.stop_gradient(
                    batchify(avail_actions, env.agents, config["NUM_ACTORS"]))
                obs_batch = batchify(last_obs, env.agents, config["NUM_ACTORS"])
                ac_in = (obs_batch[np.newaxis, :], last_done[np.newaxis, :], avail_actions)
                ac_hstate, pi = actor_network.apply(train_states[0].params, hstates[0], ac_in)
                action = pi.sample(seed=_rng)
                log_prob = pi.log_prob(action)
                env_act = unbatchify(action, env.agents, n_envs, env.num_agents)
                env_act = {k: v.squeeze() for k, v in env_act.items()}

                # VALUE: the wrapper's [E, A, W] world state as [A * E, W], agent-major
                world_state = last_obs["world_state"].swapaxes(0, 1)
                world_state = world_state.reshape((config["NUM_ACTORS"], -1))
                cr_in = (world_state[None, :], last_done[np.newaxis, :])
                cr_hstate, value = critic_network.apply(train_states[1].params, hstates[1],
                                                        cr_in)

                # STEP ENV
                rng, _rng = jax.random.split(rng)
                rng_step = jax.random.split(_rng, n_envs)
                obsv, env_state, reward, done, info = jax.vmap(env.step, in_axes=(0, 0, 0))(
                    rng_step, env_state, env_act)
                # [E, A] -> [E * A]: environment-major, unlike the rest (as theirs)
                info = jax.tree.map(lambda x: x.reshape(config["NUM_ACTORS"]), info)
                done_batch = batchify(done, env.agents, config["NUM_ACTORS"]).squeeze()
                transition = Transition(
                    jnp.tile(done["__all__"], env.num_agents),
                    last_done,
                    action.squeeze(),
                    value.squeeze(),
                    batchify(reward, env.agents, config["NUM_ACTORS"]).squeeze(),
                    log_prob.squeeze(),
                    obs_batch,
                    world_state,
                    info,
                    avail_actions,
                )
                runner_state = (train_states, env_state, obsv, done_batch,
                                (ac_hstate, cr_hstate), rng)
                return runner_state, transition

            initial_hstates = runner_state[-2]
            runner_state, traj_batch = jax.lax.scan(
                _env_step, runner_state, None, config["NUM_STEPS"])

            # CALCULATE ADVANTAGE
            train_states, env_state, last_obs, last_done, hstates, rng = runner_state
            last_world_state = last_obs["world_state"].swapaxes(0, 1)
            last_world_state = last_world_state.reshape((config["NUM_ACTORS"], -1))
            cr_in = (last_world_state[None, :], last_done[np.newaxis, :])
            _, last_val = critic_network.apply(train_states[1].params, hstates[1], cr_in)
            last_val = last_val.squeeze()

            def _calculate_gae(traj_batch: Transition,
                               last_val: jax.Array) -> tuple[jax.Array, jax.Array]:
                def _get_advantages(gae_and_next_value: tuple[jax.Array, jax.Array],
                                    transition: Transition) -> tuple[tuple, jax.Array]:
                    gae, next_value = gae_and_next_value
                    done, value, reward = (transition.global_done, transition.value,
                                           transition.reward)
                    delta = reward + config["GAMMA"] * next_value * (1 - done) - value
                    gae = delta + config["GAMMA"] * config["GAE_LAMBDA"] * (1 - done) * gae
                    return (gae, value), gae

                _, advantages = jax.lax.scan(
                    _get_advantages, (jnp.zeros_like(last_val), last_val), traj_batch,
                    reverse=True, unroll=16)
                return advantages, advantages + traj_batch.value

            advantages, targets = _calculate_gae(traj_batch, last_val)

            # UPDATE NETWORK
            def _update_epoch(update_state: tuple, unused: None) -> tuple[tuple, dict]:
                def _update_minbatch(train_states: tuple, batch_info: tuple) -> tuple:
                    actor_train_state, critic_train_state = train_states
                    ac_init_hstate, cr_init_hstate, traj_batch, advantages, targets = (
                        batch_info)

                    def _actor_loss_fn(actor_params: Any, init_hstate: jax.Array,
                                       traj_batch: Transition, gae: jax.Array) -> tuple:
                        # RERUN NETWORK
                        _, pi = actor_network.apply(
                            actor_params, init_hstate.squeeze(),
                            (traj_batch.obs, traj_batch.done, traj_batch.avail_actions))
                        log_prob = pi.log_prob(traj_batch.action)

                        # CALCULATE ACTOR LOSS
                        logratio = log_prob - traj_batch.log_prob
                        ratio = jnp.exp(logratio)
                        gae = (gae - gae.mean()) / (gae.std() + 1e-8)
                        loss_actor1 = ratio * gae
                        loss_actor2 = jnp.clip(ratio, 1.0 - config["CLIP_EPS"],
                                               1.0 + config["CLIP_EPS"]) * gae
                        loss_actor = -jnp.minimum(loss_actor1, loss_actor2)
                        loss_actor = loss_actor.mean()
                        entropy = pi.entropy().mean()
                        approx_kl = ((ratio - 1) - logratio).mean()
                        clip_frac = jnp.mean(jnp.abs(ratio - 1) > config["CLIP_EPS"])
                        actor_loss = loss_actor - config["ENT_COEF"] * entropy
                        return actor_loss, (loss_actor, entropy, ratio, approx_kl, clip_frac)

                    def _critic_loss_fn(critic_params: Any, init_hstate: jax.Array,
                                        traj_batch: Transition, targets: jax.Array) -> tuple:
                        # RERUN NETWORK
                        _, value = critic_network.apply(
                            critic_params, init_hstate.squeeze(),
                            (traj_batch.world_state, traj_batch.done))

                        # CALCULATE VALUE LOSS
                        value_pred_clipped = traj_batch.value + (
                            value - traj_batch.value).clip(-config["CLIP_EPS"],
                                                           config["CLIP_EPS"])
                        value_losses = jnp.square(value - targets)
                        value_losses_clipped = jnp.square(value_pred_clipped - targets)
                        value_loss = 0.5 * jnp.maximum(value_losses, value_losses_clipped).mean()
                        critic_loss = config["VF_COEF"] * value_loss
                        return critic_loss, value_loss

                    actor_grad_fn = jax.value_and_grad(_actor_loss_fn, has_aux=True)
                    actor_loss, actor_grads = actor_grad_fn(
                        actor_train_state.params, ac_init_hstate, traj_batch, advantages)
                    critic_grad_fn = jax.value_and_grad(_critic_loss_fn, has_aux=True)
                    critic_loss, critic_grads = critic_grad_fn(
                        critic_train_state.params, cr_init_hstate, traj_batch, targets)
                    actor_train_state = actor_train_state.apply_gradients(grads=actor_grads)
                    critic_train_state = critic_train_state.apply_gradients(grads=critic_grads)

                    loss_info = {
                        "total_loss": actor_loss[0] + critic_loss[0],
                        "actor_loss": actor_loss[0],
                        "value_loss": critic_loss[0],
                        "entropy": actor_loss[1][1],
                        "ratio": actor_loss[1][2],
                        "approx_kl": actor_loss[1][3],
                        "clip_frac": actor_loss[1][4],
                    }
                    return (actor_train_state, critic_train_state), loss_info

                train_states, init_hstates, traj_batch, advantages, targets, rng = update_state
                rng, _rng = jax.random.split(rng)
                init_hstates = jax.tree.map(
                    lambda x: jnp.reshape(x, (1, config["NUM_ACTORS"], -1)), init_hstates)
                batch = (init_hstates[0], init_hstates[1], traj_batch, advantages.squeeze(),
                         targets.squeeze())
                permutation = jax.random.permutation(_rng, config["NUM_ACTORS"])
                shuffled_batch = jax.tree.map(lambda x: jnp.take(x, permutation, axis=1), batch)
                minibatches = jax.tree.map(
                    lambda x: jnp.swapaxes(
                        jnp.reshape(x, [x.shape[0], config["NUM_MINIBATCHES"], -1]
                                    + list(x.shape[2:])), 1, 0),
                    shuffled_batch)
                train_states, loss_info = jax.lax.scan(_update_minbatch, train_states,
                                                       minibatches)
                update_state = (train_states, jax.tree.map(lambda x: x.squeeze(), init_hstates),
                                traj_batch, advantages, targets, rng)
                return update_state, loss_info

            update_state = (train_states, initial_hstates, traj_batch, advantages, targets, rng)
            update_state, loss_info = jax.lax.scan(
                _update_epoch, update_state, None, config["UPDATE_EPOCHS"])
            loss_info["ratio_0"] = loss_info["ratio"].at[0, 0].get()
            loss_info = jax.tree.map(lambda x: x.mean(), loss_info)

            train_states = update_state[0]
            info = jax.tree.map(
                lambda x: x.reshape((config["NUM_STEPS"], n_envs, env.num_agents)),
                traj_batch.info)
            # Not theirs: what final_return and final_win_rate need, over the battles that
            # ended (the flags are the same for every ally of a battle: read ally 0's).
            ended = info["returned_episode"][..., 0]
            finished = {
                "episode_return_sum": jnp.sum(info["returned_episode_returns"].sum(-1) * ended),
                "episode_count": jnp.sum(ended),
                "episode_won_sum": jnp.sum(info["returned_won_episode"][..., 0] * ended),
            }
            metric = {**jax.tree.map(lambda x: x.mean(), info), **loss_info, **finished}
            # (theirs: jax.experimental.io_callback(callback, None, metric), to wandb)
            rng = update_state[-1]
            runner_state = (train_states, env_state, last_obs, last_done, hstates, rng)
            return (runner_state, update_steps + 1), metric

        rng, _rng = jax.random.split(rng)
        runner_state = ((actor_train_state, critic_train_state), env_state, obsv,
                        jnp.zeros((config["NUM_ACTORS"]), dtype=bool),
                        (ac_init_hstate, cr_init_hstate), _rng)
        runner_state, metric = jax.lax.scan(
            _update_step, (runner_state, 0), None, config["NUM_UPDATES"])
        return {"runner_state": runner_state, "metrics": metric}

    return train


def _final(out: dict[str, Any], key: str) -> np.ndarray:
    """Per seed: the metric `key` summed over the battles that ended in the last 5% of
    updates, divided by their number (NaN where none ended)."""
    m = out["metrics"]
    count = np.asarray(m["episode_count"], np.float64)
    total = np.asarray(m[key], np.float64).reshape(-1, count.shape[-1])
    s, c = window_sum(total), window_sum(count.reshape(total.shape))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(c > 0, s / np.maximum(c, 1), np.nan)


def final_return(out: dict[str, Any]) -> float:
    """Mean team return (the sum of the allies' returns) of the battles that ended in the last
    5% of updates (`FINAL_WINDOW`), per seed, averaged over seeds."""
    return float(np.nanmean(_final(out, "episode_return_sum")))


def final_win_rate(out: dict[str, Any]) -> float:
    """The fraction of those battles won, per seed, averaged over seeds."""
    return float(np.nanmean(_final(out, "episode_won_sum")))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--map", default=None, help="MAP_NAME (theirs: 2s3z)")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--timesteps", type=int, default=None, help="TOTAL_TIMESTEPS (1e7)")
    ap.add_argument("--seed", type=int, default=None, help="default: SEED (0)")
    ap.add_argument("--seq-orthogonal", action="store_true")
    a = ap.parse_args()
    config = dict(CONFIG, SEQ_ORTHOGONAL=a.seq_orthogonal)
    if a.map is not None:
        config["MAP_NAME"] = a.map
    if a.timesteps is not None:
        config = with_timesteps(config, a.timesteps)
    rngs = jax.random.split(jax.random.PRNGKey(config["SEED"] if a.seed is None else a.seed),
                            a.seeds)
    fn, compile_s = timed_compile(jax.jit(jax.vmap(make_train(config))), rngs)
    print(f"jax {jax.__version__}: compiled in {compile_s:.1f}s; running", flush=True)
    t0 = time.perf_counter()
    out = jax.block_until_ready(fn(rngs))
    run_s = time.perf_counter() - t0
    per_update = config["NUM_ENVS"] * config["NUM_STEPS"]
    steps = a.seeds * (config["TOTAL_TIMESTEPS"] // per_update) * per_update
    print(f"ok: compile {compile_s:.1f}s run {run_s:.1f}s {steps / run_s:,.0f} env steps/s "
          f"win rate {final_win_rate(out):.3f} team return {final_return(out):.2f} "
          f"(window: the last {FINAL_WINDOW:.0%} of updates)", flush=True)


if __name__ == "__main__":
    main()
