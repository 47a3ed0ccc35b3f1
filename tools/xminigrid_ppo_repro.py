"""Single-task recurrent PPO restated from XLand-MiniGrid, as one file, to compare against: the
whole training run (rollout, GAE, minibatch epochs) is one pure function of a PRNG key and the
initial train state, run as `jax.jit(jax.vmap(make_train(...)))` over seeds.

It restates XLand-MiniGrid's `training/train_single_task.py` with its `nn.py` and `utils.py`
(github.com/dunnolab/xland-minigrid, commit 0d306d1): Nikulin et al., "XLand-MiniGrid:
Scalable Meta-Reinforcement Learning Environments in JAX", NeurIPS 2024 Datasets and
Benchmarks, arXiv:2312.12044. The environment is the installed `xminigrid` package under its
own `GymAutoResetWrapper` and `DirectionObservationWrapper`, as theirs.
Followed line for line: `TrainConfig`'s defaults (`CONFIG` below: lr 1e-3 annealed per update,
clip 0.2, gamma 0.99, lambda 0.95, entropy 0.01, value 0.5, grad-norm 0.5, one epoch of 16
minibatches of whole environments, 16 steps per rollout), the network (`ActorCriticRNN`: tile
and colour embeddings of 16, three 2x2 ReLU convolutions of 16, 32 and 64 channels, a dense
embedding of the direction and an embedding of the previous action, the previous reward, a
GRU with its own gate layout and initialisers, tanh heads), the optimiser (clip_by_global_norm
then Adam with eps 1e-8 on their linear schedule), the GAE, the clipped value loss, the
minibatch permutation and the order of the PRNG splits. Their recurrent state is never reset:
it runs on across episodes, and every episode end (goal or time limit) is a `done` that stops
the bootstrap.

What differs from theirs:
- No pmap, wandb or pyrallis: seeds are a vmap axis, and `make_states` builds each seed's train
  state as theirs builds one (outside any transformation: their orthogonal initialisers are QR
  decompositions) and stacks them. The config is a dict of their `TrainConfig`'s fields;
  `tools/xland_learning.py` scales its sizes for this CPU.
- Each seed's run starts from the key `make_states` returns; their `train()` first splits it
  into one key per device, and runs the first (on one device, `split(rng, 1)[0]`): the same
  program on another draw of the same distribution.
- `CONFIG` names an XLand world (theirs defaults to MiniGrid-Empty-6x6, and takes the ruleset
  from `benchmark_id`/`ruleset_id`; here `make_env` takes it); their `img_obs`, `enable_bf16`
  and `seed` fields are left out (off, off, and the seeds are `make_states`' argument).
- Their evaluation after every update (`EVAL_EPISODES` stochastic episodes from a fresh state)
  is kept but off by default (`EVAL_EPISODES: 0`): it only reports, and on this CPU it would cost
  as much as training. Off, it also skips the key split it takes, so the training stream after
  the first update is not the one theirs draws with it on.
- Additions: per-update metrics `episode_return_sum` and `episode_count` (the returns of the
  training episodes that ended during the update, and how many), which a running return in the
  runner state adds up; nothing they feed into changes the numerics.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import distrax
import flax
import flax.linen as nn
import jax
import jax.numpy as jnp
import jax.tree_util as jtu
import optax
from flax.linen.initializers import glorot_normal, orthogonal, zeros_init
from flax.training.train_state import TrainState

CONFIG: dict[str, Any] = {
    "ENV_ID": "XLand-MiniGrid-R1-9x9",
    "OBS_EMB_DIM": 16,
    "ACTION_EMB_DIM": 16,
    "RNN_HIDDEN_DIM": 1024,
    "RNN_NUM_LAYERS": 1,
    "HEAD_HIDDEN_DIM": 256,
    "NUM_ENVS": 8192,
    "NUM_STEPS": 16,
    "UPDATE_EPOCHS": 1,
    "NUM_MINIBATCHES": 16,
    "TOTAL_TIMESTEPS": 1_000_000,
    "LR": 0.001,
    "CLIP_EPS": 0.2,
    "GAMMA": 0.99,
    "GAE_LAMBDA": 0.95,
    "ENT_COEF": 0.01,
    "VF_COEF": 0.5,
    "MAX_GRAD_NORM": 0.5,
    "EVAL_EPISODES": 0,
}


class GRU(nn.Module):
    hidden_dim: int

    @nn.compact
    def __call__(self, xs: jax.Array, init_state: jax.Array) -> tuple[jax.Array, jax.Array]:
        seq_len, input_dim = xs.shape
        Wi = self.param("Wi", glorot_normal(in_axis=1, out_axis=0),
                        (self.hidden_dim * 3, input_dim))
        Wh = self.param("Wh", orthogonal(column_axis=0), (self.hidden_dim * 3, self.hidden_dim))
        bi = self.param("bi", zeros_init(), (self.hidden_dim * 3,))
        bn = self.param("bn", zeros_init(), (self.hidden_dim,))

        def _step_fn(h: jax.Array, x: jax.Array) -> tuple[jax.Array, jax.Array]:
            igates = jnp.split(Wi @ x + bi, 3)
            hgates = jnp.split(Wh @ h, 3)
            reset = nn.sigmoid(igates[0] + hgates[0])
            update = nn.sigmoid(igates[1] + hgates[1])
            new = nn.tanh(igates[2] + reset * (hgates[2] + bn))
            next_h = (1 - update) * new + update * h
            return next_h, next_h

        last_state, all_states = jax.lax.scan(_step_fn, init=init_state, xs=xs)
        return all_states, last_state


class RNNModel(nn.Module):
    hidden_dim: int
    num_layers: int

    @nn.compact
    def __call__(self, xs: jax.Array, init_state: jax.Array) -> tuple[jax.Array, jax.Array]:
        outs, states = [], []
        for layer in range(self.num_layers):
            xs, state = GRU(self.hidden_dim)(xs, init_state[layer])
            outs.append(xs)
            states.append(state)
        return jnp.array(outs).sum(0), jnp.array(states)


BatchedRNNModel = flax.linen.vmap(
    RNNModel, variable_axes={"params": None}, split_rngs={"params": False}, axis_name="batch"
)


class EmbeddingEncoder(nn.Module):
    emb_dim: int = 16

    @nn.compact
    def __call__(self, img: jax.Array) -> jax.Array:
        from xminigrid.core.constants import NUM_COLORS, NUM_TILES

        entity_emb = nn.Embed(NUM_TILES, self.emb_dim)
        color_emb = nn.Embed(NUM_COLORS, self.emb_dim)
        return jnp.concatenate([entity_emb(img[..., 0]), color_emb(img[..., 1])], axis=-1)


class ActorCriticRNN(nn.Module):
    num_actions: int
    obs_emb_dim: int = 16
    action_emb_dim: int = 16
    rnn_hidden_dim: int = 64
    rnn_num_layers: int = 1
    head_hidden_dim: int = 64

    @nn.compact
    def __call__(self, inputs: dict[str, jax.Array],
                 hidden: jax.Array) -> tuple[distrax.Categorical, jax.Array, jax.Array]:
        B, S = inputs["obs_img"].shape[:2]
        conv = partial(nn.Conv, kernel_size=(2, 2), padding="VALID",
                       kernel_init=orthogonal(math.sqrt(2)))
        img_encoder = nn.Sequential([EmbeddingEncoder(emb_dim=self.obs_emb_dim),
                                     conv(16), nn.relu, conv(32), nn.relu, conv(64), nn.relu])
        action_encoder = nn.Embed(self.num_actions, self.action_emb_dim)
        direction_encoder = nn.Dense(self.action_emb_dim)
        rnn_core = BatchedRNNModel(self.rnn_hidden_dim, self.rnn_num_layers)
        actor = nn.Sequential([nn.Dense(self.head_hidden_dim, kernel_init=orthogonal(2)), nn.tanh,
                               nn.Dense(self.num_actions, kernel_init=orthogonal(0.01))])
        critic = nn.Sequential([nn.Dense(self.head_hidden_dim, kernel_init=orthogonal(2)),
                                nn.tanh, nn.Dense(1, kernel_init=orthogonal(1.0))])

        obs_emb = img_encoder(inputs["obs_img"].astype(jnp.int32)).reshape(B, S, -1)
        dir_emb = direction_encoder(inputs["obs_dir"])
        act_emb = action_encoder(inputs["prev_action"])
        out = jnp.concatenate([obs_emb, dir_emb, act_emb, inputs["prev_reward"][..., None]],
                              axis=-1)
        out, new_hidden = rnn_core(out, hidden)
        logits = actor(out).astype(jnp.float32)
        dist = distrax.Categorical(logits=logits)
        values = critic(out)
        return dist, jnp.squeeze(values, axis=-1), new_hidden

    def initialize_carry(self, batch_size: int) -> jax.Array:
        return jnp.zeros((batch_size, self.rnn_num_layers, self.rnn_hidden_dim))


class Transition(NamedTuple):
    done: jax.Array
    action: jax.Array
    value: jax.Array
    reward: jax.Array
    log_prob: jax.Array
    obs: jax.Array
    dir: jax.Array
    prev_action: jax.Array
    prev_reward: jax.Array


def calculate_gae(transitions: Transition, last_val: jax.Array, gamma: float,
                  gae_lambda: float) -> tuple[jax.Array, jax.Array]:
    def _get_advantages(gae_and_next_value: tuple[jax.Array, jax.Array],
                        transition: Transition) -> tuple[tuple[jax.Array, jax.Array], jax.Array]:
        gae, next_value = gae_and_next_value
        delta = transition.reward + gamma * next_value * (1 - transition.done) - transition.value
        gae = delta + gamma * gae_lambda * (1 - transition.done) * gae
        return (gae, transition.value), gae

    _, advantages = jax.lax.scan(_get_advantages, (jnp.zeros_like(last_val), last_val),
                                 transitions, reverse=True)
    return advantages, advantages + transitions.value


def ppo_update_networks(train_state: TrainState, transitions: Transition,
                        init_hstate: jax.Array, advantages: jax.Array, targets: jax.Array,
                        clip_eps: float, vf_coef: float,
                        ent_coef: float) -> tuple[TrainState, dict[str, jax.Array]]:
    advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)

    def _loss_fn(params: Any) -> tuple[jax.Array, tuple[jax.Array, ...]]:
        dist, value, _ = train_state.apply_fn(
            params,
            {"obs_img": transitions.obs, "obs_dir": transitions.dir,
             "prev_action": transitions.prev_action, "prev_reward": transitions.prev_reward},
            init_hstate,
        )
        log_prob = dist.log_prob(transitions.action)
        value_pred_clipped = transitions.value + (value - transitions.value).clip(-clip_eps,
                                                                                   clip_eps)
        value_loss = jnp.square(value - targets)
        value_loss_clipped = jnp.square(value_pred_clipped - targets)
        value_loss = 0.5 * jnp.maximum(value_loss, value_loss_clipped).mean()
        ratio = jnp.exp(log_prob - transitions.log_prob)
        actor_loss1 = advantages * ratio
        actor_loss2 = advantages * jnp.clip(ratio, 1.0 - clip_eps, 1.0 + clip_eps)
        actor_loss = -jnp.minimum(actor_loss1, actor_loss2).mean()
        entropy = dist.entropy().mean()
        total_loss = actor_loss + vf_coef * value_loss - ent_coef * entropy
        return total_loss, (value_loss, actor_loss, entropy)

    (loss, (vloss, aloss, entropy)), grads = jax.value_and_grad(_loss_fn, has_aux=True)(
        train_state.params)
    train_state = train_state.apply_gradients(grads=grads)
    return train_state, {"total_loss": loss, "value_loss": vloss, "actor_loss": aloss,
                         "entropy": entropy}


class RolloutStats(NamedTuple):
    reward: jax.Array = jnp.asarray(0.0)
    length: jax.Array = jnp.asarray(0)
    episodes: jax.Array = jnp.asarray(0)


def rollout(rng: jax.Array, env: Any, env_params: Any, train_state: TrainState,
            init_hstate: jax.Array, num_consecutive_episodes: int = 1) -> RolloutStats:
    def _cond_fn(carry: tuple) -> jax.Array:
        return jnp.less(carry[1].episodes, num_consecutive_episodes)

    def _body_fn(carry: tuple) -> tuple:
        rng, stats, timestep, prev_action, prev_reward, hstate = carry
        rng, _rng = jax.random.split(rng)
        dist, _, hstate = train_state.apply_fn(
            train_state.params,
            {"obs_img": timestep.observation["img"][None, None, ...],
             "obs_dir": timestep.observation["direction"][None, None, ...],
             "prev_action": prev_action[None, None, ...],
             "prev_reward": prev_reward[None, None, ...]},
            hstate,
        )
        action = dist.sample(seed=_rng).squeeze()
        timestep = env.step(env_params, timestep, action)
        stats = stats._replace(reward=stats.reward + timestep.reward, length=stats.length + 1,
                               episodes=stats.episodes + timestep.last())
        return (rng, stats, timestep, action, timestep.reward, hstate)

    timestep = env.reset(env_params, rng)
    init_carry = (rng, RolloutStats(), timestep, jnp.asarray(0), jnp.asarray(0), init_hstate)
    return jax.lax.while_loop(_cond_fn, _body_fn, init_val=init_carry)[1]


def num_updates(config: dict[str, Any]) -> int:
    return config["TOTAL_TIMESTEPS"] // config["NUM_STEPS"] // config["NUM_ENVS"]


def make_env(config: dict[str, Any], ruleset: Any = None) -> tuple[Any, Any]:
    """Their environment: `xminigrid.make`, the Gym-style auto-reset and the direction
    observation; `ruleset` (an XLand ruleset) replaces the params' one, as their
    `benchmark_id`/`ruleset_id` do."""
    import xminigrid
    from xminigrid.wrappers import DirectionObservationWrapper, GymAutoResetWrapper

    env, env_params = xminigrid.make(config["ENV_ID"])
    env = DirectionObservationWrapper(GymAutoResetWrapper(env))
    if ruleset is not None:
        env_params = env_params.replace(ruleset=ruleset)
    return env, env_params


def make_states(config: dict[str, Any], env: Any, env_params: Any,
                seeds: list[int]) -> tuple[jax.Array, jax.Array, TrainState]:
    """(rng, init_hstate, train_state) of each seed, as their `make_states` builds one, stacked
    on a leading seed axis; the seeds share the network and optimiser objects (a train state's
    static fields)."""
    updates = num_updates(config)

    def linear_schedule(count: jax.Array) -> jax.Array:
        frac = 1.0 - (count // (config["NUM_MINIBATCHES"] * config["UPDATE_EPOCHS"])) / updates
        return config["LR"] * frac

    network = ActorCriticRNN(
        num_actions=env.num_actions(env_params), obs_emb_dim=config["OBS_EMB_DIM"],
        action_emb_dim=config["ACTION_EMB_DIM"], rnn_hidden_dim=config["RNN_HIDDEN_DIM"],
        rnn_num_layers=config["RNN_NUM_LAYERS"], head_hidden_dim=config["HEAD_HIDDEN_DIM"])
    shapes = env.observation_shape(env_params)
    n = config["NUM_ENVS"]
    init_obs = {"obs_img": jnp.zeros((n, 1, *shapes["img"])),
                "obs_dir": jnp.zeros((n, 1, shapes["direction"])),
                "prev_action": jnp.zeros((n, 1), dtype=jnp.int32),
                "prev_reward": jnp.zeros((n, 1))}
    init_hstate = network.initialize_carry(batch_size=n)
    tx = optax.chain(
        optax.clip_by_global_norm(config["MAX_GRAD_NORM"]),
        optax.inject_hyperparams(optax.adam)(learning_rate=linear_schedule, eps=1e-8),
    )
    states = []
    for seed in seeds:
        rng = jax.random.key(seed)
        rng, _rng = jax.random.split(rng)
        network_params = network.init(_rng, init_obs, init_hstate)
        train_state = TrainState.create(apply_fn=network.apply, params=network_params, tx=tx)
        states.append((rng, init_hstate, train_state))
    return jax.tree.map(lambda *x: jnp.stack(x), *states)


def make_train(config: dict[str, Any], env: Any,
               env_params: Any) -> Callable[[jax.Array, TrainState, jax.Array], dict[str, Any]]:
    n = config["NUM_ENVS"]
    updates = num_updates(config)

    def train(rng: jax.Array, train_state: TrainState, init_hstate: jax.Array) -> dict[str, Any]:
        rng, _rng = jax.random.split(rng)
        reset_rng = jax.random.split(_rng, n)
        timestep = jax.vmap(env.reset, in_axes=(None, 0))(env_params, reset_rng)
        prev_action = jnp.zeros(n, dtype=jnp.int32)
        prev_reward = jnp.zeros(n)

        def _update_step(runner_state: tuple, _: None) -> tuple[tuple, dict[str, jax.Array]]:
            def _env_step(runner_state: tuple, _: None) -> tuple[tuple, tuple]:
                (rng, train_state, prev_timestep, prev_action, prev_reward, prev_hstate,
                 ep_ret) = runner_state
                rng, _rng = jax.random.split(rng)
                dist, value, hstate = train_state.apply_fn(
                    train_state.params,
                    {"obs_img": prev_timestep.observation["img"][:, None],
                     "obs_dir": prev_timestep.observation["direction"][:, None],
                     "prev_action": prev_action[:, None],
                     "prev_reward": prev_reward[:, None]},
                    prev_hstate,
                )
                action, log_prob = dist.sample_and_log_prob(seed=_rng)
                action, value, log_prob = action.squeeze(1), value.squeeze(1), log_prob.squeeze(1)
                timestep = jax.vmap(env.step, in_axes=(None, 0, 0))(env_params, prev_timestep,
                                                                    action)
                transition = Transition(
                    done=timestep.last(), action=action, value=value, reward=timestep.reward,
                    log_prob=log_prob, obs=prev_timestep.observation["img"],
                    dir=prev_timestep.observation["direction"], prev_action=prev_action,
                    prev_reward=prev_reward)
                # addition: the running return of each environment's episode
                ep_ret = ep_ret + timestep.reward
                ended = timestep.last()
                log = (jnp.where(ended, ep_ret, 0.0).sum(), ended.sum())
                ep_ret = jnp.where(ended, 0.0, ep_ret)
                runner_state = (rng, train_state, timestep, action, timestep.reward, hstate,
                                ep_ret)
                return runner_state, (transition, log)

            initial_hstate = runner_state[5]
            runner_state, (transitions, log) = jax.lax.scan(_env_step, runner_state, None,
                                                            config["NUM_STEPS"])
            rng, train_state, timestep, prev_action, prev_reward, hstate, ep_ret = runner_state
            _, last_val, _ = train_state.apply_fn(
                train_state.params,
                {"obs_img": timestep.observation["img"][:, None],
                 "obs_dir": timestep.observation["direction"][:, None],
                 "prev_action": prev_action[:, None],
                 "prev_reward": prev_reward[:, None]},
                hstate,
            )
            advantages, targets = calculate_gae(transitions, last_val.squeeze(1),
                                                config["GAMMA"], config["GAE_LAMBDA"])

            def _update_epoch(update_state: tuple, _: None) -> tuple[tuple, dict[str, jax.Array]]:
                def _update_minbatch(train_state: TrainState,
                                     batch_info: tuple) -> tuple[TrainState, dict]:
                    init_hstate, transitions, advantages, targets = batch_info
                    return ppo_update_networks(
                        train_state=train_state, transitions=transitions,
                        init_hstate=init_hstate.squeeze(1), advantages=advantages,
                        targets=targets, clip_eps=config["CLIP_EPS"], vf_coef=config["VF_COEF"],
                        ent_coef=config["ENT_COEF"])

                rng, train_state, init_hstate, transitions, advantages, targets = update_state
                rng, _rng = jax.random.split(rng)
                permutation = jax.random.permutation(_rng, n)
                batch = (init_hstate, transitions, advantages, targets)
                batch = jtu.tree_map(lambda x: x.swapaxes(0, 1), batch)
                shuffled_batch = jtu.tree_map(lambda x: jnp.take(x, permutation, axis=0), batch)
                minibatches = jtu.tree_map(
                    lambda x: jnp.reshape(x, (config["NUM_MINIBATCHES"], -1) + x.shape[1:]),
                    shuffled_batch)
                train_state, update_info = jax.lax.scan(_update_minbatch, train_state,
                                                        minibatches)
                update_state = (rng, train_state, init_hstate, transitions, advantages, targets)
                return update_state, update_info

            init_hstate = initial_hstate[None, :]
            update_state = (rng, train_state, init_hstate, transitions, advantages, targets)
            update_state, loss_info = jax.lax.scan(_update_epoch, update_state, None,
                                                   config["UPDATE_EPOCHS"])
            loss_info = jtu.tree_map(lambda x: x.mean(-1).mean(-1), loss_info)
            rng, train_state = update_state[:2]
            if config["EVAL_EPISODES"]:
                rng, _rng = jax.random.split(rng)
                eval_rng = jax.random.split(_rng, num=config["EVAL_EPISODES"])
                eval_stats = jax.vmap(rollout, in_axes=(0, None, None, None, None, None))(
                    eval_rng, env, env_params, train_state,
                    jnp.zeros((1, config["RNN_NUM_LAYERS"], config["RNN_HIDDEN_DIM"])), 1)
                loss_info.update({"eval/returns": eval_stats.reward.mean(0),
                                  "eval/lengths": eval_stats.length.mean(0)})
            loss_info.update({"lr": train_state.opt_state[-1].hyperparams["learning_rate"],
                              "episode_return_sum": log[0].sum(), "episode_count": log[1].sum()})
            runner_state = (rng, train_state, timestep, prev_action, prev_reward, hstate, ep_ret)
            return runner_state, loss_info

        runner_state = (rng, train_state, timestep, prev_action, prev_reward, init_hstate,
                        jnp.zeros(n))
        runner_state, loss_info = jax.lax.scan(_update_step, runner_state, None, updates)
        return {"runner_state": runner_state, "loss_info": loss_info}

    return train
