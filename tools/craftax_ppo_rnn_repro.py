"""Craftax_Baselines' recurrent PPO (`ppo_rnn.py` with its `wrappers.py`, Matthews et al.,
2024: the Craftax paper's PPO-RNN), restated for like-for-like comparisons with ours
(`tools/craftax_learning.py --theirs`).

Restated from github.com/MichaelTMatthews/Craftax_Baselines (`ppo_rnn.py`, `wrappers.py`) with
its libraries (flax, optax, distrax) and its structure, so that its numerics are the ones a user
of that script gets:
- the network: a ReLU layer of LAYER_SIZE with orthogonal(sqrt 2) weights, flax's GRU cell of the
  same width reset to zeros where an episode starts, then actor and critic heads of two ReLU
  layers each with orthogonal(2) weights, the actor's output orthogonal(0.01), the critic's 1.0;
- Craftax's own environment without its auto-reset, its `LogWrapper` and its optimistic resets
  (`OptimisticResetVecEnvWrapper`: NUM_ENVS / 16 fresh worlds per step, handed to environments
  that ended, chosen at random among them when more than that many ended);
- one `done` for both ends of an episode: GAE stops at every end, the time limit included;
- Adam (eps 1e-5) after global-norm clipping, its learning rate annealed per update;
- per epoch, a permutation of the environments into NUM_MINIBATCHES minibatches of whole
  sequences, replayed from the GRU state of the rollout's start; the advantages normalised per
  minibatch; the clipped value loss.
The defaults are the script's (`CONFIG`). Left out: wandb logging, checkpoints, `--jit`.
Added: per-update `episode_return_sum`, `episode_count` and `episode_achievements_sum` `[K]`
(sums over the episodes that ended, as ours reports them) in place of its logged means.
Seeds: its `run_ppo` splits `PRNGKey(SEED)` into NUM_REPEATS keys and vmaps `train` over them;
`make_keys` splits the same keys, and `craftax_learning.py` runs them one after another in one
program (`lax.map`): under `vmap`, at layers of 256, the program stalls in XLA's CPU runtime
(jax 0.10.2: no progress and no CPU used; at layers of 32 it runs).

    uv run --group bench python tools/craftax_learning.py --theirs --env Craftax-Classic-Symbolic-v1
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import distrax
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import struct
from flax.linen.initializers import constant, orthogonal
from flax.training.train_state import TrainState

CONFIG: dict[str, Any] = {
    "ENV_NAME": "Craftax-Symbolic-v1", "NUM_ENVS": 1024, "TOTAL_TIMESTEPS": int(1e9),
    "LR": 2e-4, "NUM_STEPS": 64, "UPDATE_EPOCHS": 4, "NUM_MINIBATCHES": 8, "GAMMA": 0.99,
    "GAE_LAMBDA": 0.8, "CLIP_EPS": 0.2, "ENT_COEF": 0.01, "VF_COEF": 0.5, "MAX_GRAD_NORM": 1.0,
    "ANNEAL_LR": True, "LAYER_SIZE": 512, "USE_OPTIMISTIC_RESETS": True,
    "OPTIMISTIC_RESET_RATIO": 16, "SEED": 0, "NUM_REPEATS": 1,
}


# ----------------------------------------------------------------------------- wrappers.py


@struct.dataclass
class LogEnvState:
    env_state: Any
    episode_returns: float
    episode_lengths: int
    returned_episode_returns: float
    returned_episode_lengths: int
    timestep: int


class LogWrapper:
    """Running and last-finished episode return and length, in `info`."""

    def __init__(self, env: Any):
        self._env = env

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)

    def reset(self, key: Any, params: Any = None) -> tuple[Any, LogEnvState]:
        obs, env_state = self._env.reset(key, params)
        return obs, LogEnvState(env_state, 0.0, 0, 0.0, 0, 0)

    def step(self, key: Any, state: LogEnvState, action: Any, params: Any = None) -> Any:
        obs, env_state, reward, done, info = self._env.step(key, state.env_state, action, params)
        ret = state.episode_returns + reward
        length = state.episode_lengths + 1
        state = LogEnvState(
            env_state=env_state,
            episode_returns=ret * (1 - done),
            episode_lengths=length * (1 - done),
            returned_episode_returns=state.returned_episode_returns * (1 - done) + ret * done,
            returned_episode_lengths=state.returned_episode_lengths * (1 - done) + length * done,
            timestep=state.timestep + 1,
        )
        info["returned_episode_returns"] = state.returned_episode_returns
        info["returned_episode_lengths"] = state.returned_episode_lengths
        info["timestep"] = state.timestep
        info["returned_episode"] = done
        return obs, state, reward, done, info


class OptimisticResetVecEnvWrapper:
    """NUM_ENVS environments stepped together; each step computes NUM_ENVS / reset_ratio resets
    and hands them to environments that ended (the ended ones at random when more ended)."""

    def __init__(self, env: Any, num_envs: int, reset_ratio: int):
        assert num_envs % reset_ratio == 0, "reset_ratio must divide num_envs"
        self._env = env
        self.num_envs = num_envs
        self.reset_ratio = reset_ratio
        self.num_resets = num_envs // reset_ratio
        self.reset_fn = jax.vmap(env.reset, in_axes=(0, None))
        self.step_fn = jax.vmap(env.step, in_axes=(0, 0, 0, None))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._env, name)

    def reset(self, rng: Any, params: Any = None) -> Any:
        rng, key = jax.random.split(rng)
        return self.reset_fn(jax.random.split(key, self.num_envs), params)

    def step(self, rng: Any, state: Any, action: Any, params: Any = None) -> Any:
        rng, key = jax.random.split(rng)
        obs_st, state_st, reward, done, info = self.step_fn(
            jax.random.split(key, self.num_envs), state, action, params)
        rng, key = jax.random.split(rng)
        obs_re, state_re = self.reset_fn(jax.random.split(key, self.num_resets), params)
        rng, key = jax.random.split(rng)
        reset_indexes = jnp.arange(self.num_resets).repeat(self.reset_ratio)
        random_pick = jax.random.choice(key, jnp.arange(self.num_envs), shape=(self.num_resets,),
                                        p=done, replace=False)
        first_pick = jnp.argsort(done)[-self.num_resets:]
        being_reset = jax.lax.select(done.astype(jnp.int32).sum() < self.num_resets,
                                     first_pick, random_pick)
        reset_indexes = reset_indexes.at[being_reset].set(jnp.arange(self.num_resets))
        obs_re = obs_re[reset_indexes]
        state_re = jax.tree.map(lambda x: x[reset_indexes], state_re)

        def pick(d: Any, s_re: Any, s_st: Any, o_re: Any, o_st: Any) -> Any:
            s = jax.tree.map(lambda x, y: jax.lax.select(d, x, y), s_re, s_st)
            return s, jax.lax.select(d, o_re, o_st)

        state, obs = jax.vmap(pick)(done, state_re, state_st, obs_re, obs_st)
        return obs, state, reward, done, info


# ------------------------------------------------------------------------------ ppo_rnn.py


class ScannedRNN(nn.Module):
    @functools.partial(nn.scan, variable_broadcast="params", in_axes=0, out_axes=0,
                       split_rngs={"params": False})
    @nn.compact
    def __call__(self, carry: Any, x: Any) -> Any:
        ins, resets = x
        carry = jnp.where(resets[:, np.newaxis],
                          self.initialize_carry(ins.shape[0], ins.shape[1]), carry)
        return nn.GRUCell(features=ins.shape[1])(carry, ins)

    @staticmethod
    def initialize_carry(batch_size: int, hidden_size: int) -> Any:
        return nn.GRUCell(features=hidden_size).initialize_carry(
            jax.random.PRNGKey(0), (batch_size, hidden_size))


class ActorCriticRNN(nn.Module):
    action_dim: int
    layer_size: int

    @nn.compact
    def __call__(self, hidden: Any, x: Any) -> Any:
        obs, dones = x
        L = self.layer_size
        emb = nn.relu(nn.Dense(L, kernel_init=orthogonal(np.sqrt(2)),
                               bias_init=constant(0.0))(obs))
        hidden, emb = ScannedRNN()(hidden, (emb, dones))

        def head(out: int, scale: float) -> Any:
            h = nn.relu(nn.Dense(L, kernel_init=orthogonal(2), bias_init=constant(0.0))(emb))
            h = nn.relu(nn.Dense(L, kernel_init=orthogonal(2), bias_init=constant(0.0))(h))
            return nn.Dense(out, kernel_init=orthogonal(scale), bias_init=constant(0.0))(h)

        logits = head(self.action_dim, 0.01)
        value = head(1, 1.0)
        return hidden, distrax.Categorical(logits=logits), jnp.squeeze(value, axis=-1)


class Transition(NamedTuple):
    done: Any
    action: Any
    value: Any
    reward: Any
    log_prob: Any
    obs: Any
    info: Any


def make_env(config: dict[str, Any]) -> tuple[Any, Any]:
    from craftax.craftax_env import make_craftax_env_from_name

    env = make_craftax_env_from_name(config["ENV_NAME"], not config["USE_OPTIMISTIC_RESETS"])
    params = env.default_params
    env = LogWrapper(env)
    assert config["USE_OPTIMISTIC_RESETS"], "the restatement keeps the optimistic resets only"
    return OptimisticResetVecEnvWrapper(
        env, config["NUM_ENVS"],
        min(config["OPTIMISTIC_RESET_RATIO"], config["NUM_ENVS"])), params


def make_keys(config: dict[str, Any]) -> Any:
    """The seeds' keys as its `run_ppo` makes them."""
    return jax.random.split(jax.random.PRNGKey(config["SEED"]), config["NUM_REPEATS"])


def make_train(config: dict[str, Any]) -> Any:
    config = dict(config)
    config["NUM_UPDATES"] = config["TOTAL_TIMESTEPS"] // config["NUM_STEPS"] // config["NUM_ENVS"]
    env, env_params = make_env(config)
    achievement_keys = achievement_order(config["ENV_NAME"])

    def linear_schedule(count: Any) -> Any:
        frac = 1.0 - (count // (config["NUM_MINIBATCHES"] * config["UPDATE_EPOCHS"])
                      ) / config["NUM_UPDATES"]
        return config["LR"] * frac

    def train(rng: Any) -> dict[str, Any]:
        network = ActorCriticRNN(env.action_space(env_params).n, config["LAYER_SIZE"])
        rng, key = jax.random.split(rng)
        init_x = (jnp.zeros((1, config["NUM_ENVS"], *env.observation_space(env_params).shape)),
                  jnp.zeros((1, config["NUM_ENVS"])))
        init_hstate = ScannedRNN.initialize_carry(config["NUM_ENVS"], config["LAYER_SIZE"])
        params = network.init(key, init_hstate, init_x)
        lr = linear_schedule if config["ANNEAL_LR"] else config["LR"]
        tx = optax.chain(optax.clip_by_global_norm(config["MAX_GRAD_NORM"]),
                         optax.adam(learning_rate=lr, eps=1e-5))
        train_state = TrainState.create(apply_fn=network.apply, params=params, tx=tx)
        rng, key = jax.random.split(rng)
        obsv, env_state = env.reset(key, env_params)
        init_hstate = ScannedRNN.initialize_carry(config["NUM_ENVS"], config["LAYER_SIZE"])

        def update_step(runner_state: Any, _: Any) -> Any:
            def env_step(runner_state: Any, _: Any) -> Any:
                train_state, env_state, last_obs, last_done, hstate, rng, step = runner_state
                rng, key = jax.random.split(rng)
                ac_in = (last_obs[np.newaxis, :], last_done[np.newaxis, :])
                hstate, pi, value = network.apply(train_state.params, hstate, ac_in)
                action = pi.sample(seed=key)
                log_prob = pi.log_prob(action)
                value, action, log_prob = value.squeeze(0), action.squeeze(0), log_prob.squeeze(0)
                rng, key = jax.random.split(rng)
                obsv, env_state, reward, done, info = env.step(key, env_state, action, env_params)
                transition = Transition(last_done, action, value, reward, log_prob, last_obs,
                                        info)
                return (train_state, env_state, obsv, done, hstate, rng, step), transition

            initial_hstate = runner_state[-3]
            runner_state, traj = jax.lax.scan(env_step, runner_state, None, config["NUM_STEPS"])
            train_state, env_state, last_obs, last_done, hstate, rng, step = runner_state
            ac_in = (last_obs[np.newaxis, :], last_done[np.newaxis, :])
            _, _, last_val = network.apply(train_state.params, hstate, ac_in)
            last_val = last_val.squeeze(0)

            def gae_step(carry: Any, t: Transition) -> Any:
                gae, next_value, next_done = carry
                delta = t.reward + config["GAMMA"] * next_value * (1 - next_done) - t.value
                gae = delta + config["GAMMA"] * config["GAE_LAMBDA"] * (1 - next_done) * gae
                return (gae, t.value, t.done), gae

            _, advantages = jax.lax.scan(gae_step, (jnp.zeros_like(last_val), last_val,
                                                    last_done), traj, reverse=True, unroll=16)
            targets = advantages + traj.value

            def update_epoch(update_state: Any, _: Any) -> Any:
                def update_minibatch(train_state: Any, batch: Any) -> Any:
                    h0, traj, gae, targets = batch

                    def loss_fn(params: Any) -> Any:
                        _, pi, value = network.apply(params, h0[0], (traj.obs, traj.done))
                        log_prob = pi.log_prob(traj.action)
                        clipped = traj.value + (value - traj.value).clip(-config["CLIP_EPS"],
                                                                         config["CLIP_EPS"])
                        value_loss = 0.5 * jnp.maximum(jnp.square(value - targets),
                                                       jnp.square(clipped - targets)).mean()
                        ratio = jnp.exp(log_prob - traj.log_prob)
                        g = (gae - gae.mean()) / (gae.std() + 1e-8)
                        actor = -jnp.minimum(ratio * g, jnp.clip(
                            ratio, 1.0 - config["CLIP_EPS"], 1.0 + config["CLIP_EPS"]) * g).mean()
                        entropy = pi.entropy().mean()
                        total = (actor + config["VF_COEF"] * value_loss
                                 - config["ENT_COEF"] * entropy)
                        return total, (value_loss, actor, entropy)

                    loss, grads = jax.value_and_grad(loss_fn, has_aux=True)(train_state.params)
                    return train_state.apply_gradients(grads=grads), loss

                train_state, h0, traj, advantages, targets, rng = update_state
                rng, key = jax.random.split(rng)
                permutation = jax.random.permutation(key, config["NUM_ENVS"])
                batch = (h0, traj, advantages, targets)
                shuffled = jax.tree.map(lambda x: jnp.take(x, permutation, axis=1), batch)
                minibatches = jax.tree.map(
                    lambda x: jnp.swapaxes(jnp.reshape(
                        x, [x.shape[0], config["NUM_MINIBATCHES"], -1] + list(x.shape[2:])),
                        1, 0), shuffled)
                train_state, loss = jax.lax.scan(update_minibatch, train_state, minibatches)
                return (train_state, h0, traj, advantages, targets, rng), loss

            update_state = (train_state, initial_hstate[None, :], traj, advantages, targets, rng)
            update_state, _ = jax.lax.scan(update_epoch, update_state, None,
                                           config["UPDATE_EPOCHS"])
            train_state, rng = update_state[0], update_state[-1]
            ended = traj.info["returned_episode"]
            achievements = jnp.stack([traj.info[k] for k in achievement_keys], axis=-1) / 100.0
            metric = {
                "episode_return_sum": jnp.sum(traj.info["returned_episode_returns"] * ended),
                "episode_count": jnp.sum(ended).astype(jnp.float32),
                "episode_achievements_sum": jnp.sum(achievements * ended[..., None], axis=(0, 1)),
            }
            return (train_state, env_state, last_obs, last_done, hstate, rng, step + 1), metric

        rng, key = jax.random.split(rng)
        runner_state = (train_state, env_state, obsv, jnp.zeros((config["NUM_ENVS"]), dtype=bool),
                        init_hstate, key, 0)
        runner_state, metric = jax.lax.scan(update_step, runner_state, None,
                                            config["NUM_UPDATES"])
        return {"runner_state": runner_state, "metric": metric}

    return train


def achievement_order(env_name: str) -> list[str]:
    """Craftax's `Achievements/<name>` info keys (its step's, `* 100` where an episode ended) in
    the order of its `Achievement` enum, the order of `rl_envs`' `achievement_names`."""
    if "Classic" in env_name:
        from craftax.craftax_classic.constants import Achievement
    else:
        from craftax.craftax.constants import Achievement
    return [f"Achievements/{a.name.lower()}" for a in sorted(Achievement, key=lambda a: a.value)]
