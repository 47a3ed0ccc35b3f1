"""PQN restated from purejaxql, as one file, to compare against: the whole training run (rollout,
Q(lambda) targets, minibatch epochs) is one pure function of a PRNG key, run as
`jax.jit(jax.vmap(make_train(config)))(keys)`.

It restates `purejaxql/pqn_gymnax.py` (MLP Q-network, flattened observations; the `CARTPOLE`
config, from `config/alg/pqn_cartpole.yaml`) and its CNN twin `purejaxql/pqn_minatar.py`, which
the `MINATAR` config (`config/alg/pqn_minatar.yaml`) is written for, from github.com/mttga/purejaxql
(commit 47af6d7): Gallici, Fellows, Ellis, Pou, Masmitja, Foerster, Martin, "Simplifying Deep
Temporal Difference Learning" (PQN), ICLR 2025, arXiv:2407.04811. Network, initialisers, epsilon
and learning-rate schedules, reward scaling, Q(lambda) targets, the shuffling into minibatches and
the optimiser (clip_by_global_norm then RAdam) follow theirs line for line; the order of the PRNG
splits is theirs too (their jax <= 0.4.38 defaults to jax_threefry_partitionable=False, newer jax to
True, so the same key gives other numbers across that change).

What differs from theirs:
- gymnax: they pin gymnax 0.0.x, whose `env.step` returns (obs, state, reward, done, info) with
  `done` covering both the terminal states and the time limit. gymnax 1.0 returns (obs, state,
  reward, terminated, truncated, info); a thin adapter merges the flags, `done = terminated |
  truncated`, which is what their code expects (so a time-limit ending cuts the bootstrap, as in
  theirs) and drops the info keys gymnax 1.0 added ("terminated", "truncated",
  "final_observation"). Their wrappers (gymnax 0.0.x `FlattenObservationWrapper` and `LogWrapper`)
  are restated on top of that adapter, since gymnax 1.0's own versions speak the new API.
- Their periodic greedy test episodes (TEST_DURING_TRAINING, True in both yaml files) are off: the
  configs below carry False, and with it their code draws no PRNG keys for tests in the update
  step, so the training stream is the one their code runs with the flag off.
- No wandb, hydra, sweeps or parameter saving. `make_train` works on a copy of the config instead
  of writing NUM_UPDATES into the caller's dict.
- Additions: a NETWORK key ("mlp": pqn_gymnax.py's QNetwork with a flatten wrapper; "cnn":
  pqn_minatar.py's CNN on unflattened observations); per-update metrics `episode_return_sum` and
  `episode_count` (sums over the rollout of the returns of, and the number of, episodes that ended)
  next to their means of the info dict; and `final_return(out)`.

TOTAL_TIMESTEPS_DECAY (the horizon of the epsilon and learning-rate schedules) is, as in their yaml
files, a key apart from TOTAL_TIMESTEPS: overriding only TOTAL_TIMESTEPS in a config dict, as their
hydra override `alg.TOTAL_TIMESTEPS=...` does, keeps the schedules of the yaml's full-length run
(for CartPole at 2e5 steps the learning rate then ends at 60% of LR instead of ~0).
`with_timesteps(config, T)` sets both, so that the schedules end with the run; the command line
does that too, unless `--decay-timesteps` says otherwise.

    uv run --group bench python tools/purejaxql_pqn_repro.py --config cartpole|minatar
        [--seeds 1] [--timesteps T] [--decay-timesteps T_DECAY] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import flax.linen as nn
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import struct
from flax.training.train_state import TrainState
from gymnax.environments import spaces

# config/alg/pqn_cartpole.yaml (+ SEED, NUM_SEEDS from config/config.yaml), for pqn_gymnax.py.
CARTPOLE: dict[str, Any] = {
    "ALG_NAME": "pqn",
    "TOTAL_TIMESTEPS": 500_000,  # 5e5
    "TOTAL_TIMESTEPS_DECAY": 500_000,  # 5e5
    "NUM_ENVS": 32,
    "NUM_STEPS": 64,
    "EPS_START": 1.0,
    "EPS_FINISH": 0.2,
    "EPS_DECAY": 0.2,
    "NUM_MINIBATCHES": 16,
    "NUM_EPOCHS": 4,
    "NORM_INPUT": False,
    "HIDDEN_SIZE": 256,
    "NUM_LAYERS": 2,
    "NORM_TYPE": "layer_norm",
    "LR": 0.0001,
    "MAX_GRAD_NORM": 10,
    "LR_LINEAR_DECAY": True,
    "REW_SCALE": 0.1,
    "GAMMA": 0.99,
    "LAMBDA": 0.95,
    "ENV_NAME": "CartPole-v1",
    "ENV_KWARGS": {},
    "TEST_DURING_TRAINING": False,  # yaml: True (see the module docstring)
    "TEST_INTERVAL": 0.05,
    "TEST_NUM_ENVS": 128,
    "EPS_TEST": 0.0,
    "SEED": 0,
    "NUM_SEEDS": 1,
    "NETWORK": "mlp",  # not theirs: picks pqn_gymnax.py's network
}

# config/alg/pqn_minatar.yaml (+ SEED, NUM_SEEDS from config/config.yaml), for pqn_minatar.py.
# It has no HIDDEN_SIZE / NUM_LAYERS / NORM_INPUT / REW_SCALE: their code takes the defaults
# (the CNN's sizes are fixed, NORM_INPUT False, REW_SCALE 1).
MINATAR: dict[str, Any] = {
    "ALG_NAME": "pqn",
    "TOTAL_TIMESTEPS": 10_000_000,  # 1e7
    "TOTAL_TIMESTEPS_DECAY": 10_000_000,  # 1e7
    "NUM_ENVS": 128,
    "NUM_STEPS": 32,
    "EPS_START": 1.0,
    "EPS_FINISH": 0.05,
    "EPS_DECAY": 0.1,
    "NUM_MINIBATCHES": 32,
    "NUM_EPOCHS": 2,
    "NORM_TYPE": "layer_norm",
    "LR": 0.0005,
    "MAX_GRAD_NORM": 10,
    "LR_LINEAR_DECAY": True,
    "GAMMA": 0.99,
    "LAMBDA": 0.65,
    "ENV_NAME": "Asterix-MinAtar",
    "ENV_KWARGS": {},
    "TEST_DURING_TRAINING": False,  # yaml: True (see the module docstring)
    "TEST_INTERVAL": 0.05,
    "TEST_NUM_ENVS": 128,
    "EPS_TEST": 0.0,
    "SEED": 0,
    "NUM_SEEDS": 1,
    "NETWORK": "cnn",  # not theirs: picks pqn_minatar.py's network
}

CONFIGS = {"cartpole": CARTPOLE, "minatar": MINATAR}


# ---------------------------------------------------------------------------------------------
# Environment: gymnax 1.0 under the gymnax 0.0.x step API, and their two purerl wrappers.

_GYMNAX1_INFO_KEYS = ("terminated", "truncated", "final_observation")


class MergedDone:
    """gymnax 1.0 env with the old step API: (obs, state, reward, terminated | truncated, info)."""

    def __init__(self, env):
        self._env = env

    def __getattr__(self, name):
        return getattr(self._env, name)

    def reset(self, key, params=None):
        return self._env.reset(key, params)

    def step(self, key, state, action, params=None):
        obs, state, reward, terminated, truncated, info = self._env.step(
            key, state, action, params)
        done = jnp.logical_or(terminated, truncated)
        info = {k: v for k, v in info.items() if k not in _GYMNAX1_INFO_KEYS}
        return obs, state, reward, done, info


class FlattenObservation(MergedDone):
    """gymnax 0.0.x `FlattenObservationWrapper`: observations reshaped to one axis."""

    def observation_space(self, params) -> spaces.Box:
        space = self._env.observation_space(params)
        return spaces.Box(low=space.low, high=space.high, shape=(int(np.prod(space.shape)),),
                          dtype=space.dtype)

    def reset(self, key, params=None):
        obs, state = self._env.reset(key, params)
        return jnp.reshape(obs, (-1,)), state

    def step(self, key, state, action, params=None):
        obs, state, reward, done, info = self._env.step(key, state, action, params)
        return jnp.reshape(obs, (-1,)), state, reward, done, info


@struct.dataclass
class LogEnvState:
    env_state: Any
    episode_returns: jax.Array
    episode_lengths: jax.Array
    returned_episode_returns: jax.Array
    returned_episode_lengths: jax.Array
    timestep: jax.Array


class LogWrapper(MergedDone):
    """gymnax 0.0.x `LogWrapper`: running and last finished episode return / length in info."""

    def reset(self, key, params=None):
        obs, env_state = self._env.reset(key, params)
        # Theirs starts from python 0s, which lax.scan promotes to these dtypes.
        f0, i0 = jnp.zeros((), jnp.float32), jnp.zeros((), jnp.int32)
        return obs, LogEnvState(env_state, f0, i0, f0, i0, i0)

    def step(self, key, state, action, params=None):
        obs, env_state, reward, done, info = self._env.step(key, state.env_state, action, params)
        ep_ret = state.episode_returns + reward
        ep_len = state.episode_lengths + 1
        state = LogEnvState(
            env_state=env_state,
            episode_returns=ep_ret * (1 - done),
            episode_lengths=ep_len * (1 - done),
            returned_episode_returns=state.returned_episode_returns * (1 - done) + ep_ret * done,
            returned_episode_lengths=state.returned_episode_lengths * (1 - done) + ep_len * done,
            timestep=state.timestep + 1,
        )
        info["returned_episode_returns"] = state.returned_episode_returns
        info["returned_episode_lengths"] = state.returned_episode_lengths
        info["timestep"] = state.timestep
        info["returned_episode"] = done
        return obs, state, reward, done, info


# ---------------------------------------------------------------------------------------------
# Networks. Module names (BatchNorm_0, Dense_i, LayerNorm_i, CNN_0/Conv_0) are flax's automatic
# ones, as in theirs, so that the initial parameters drawn from a key are the same.


def _normaliser(norm_type: str, train: bool) -> Callable[[jax.Array], jax.Array]:
    if norm_type == "layer_norm":
        return lambda h: nn.LayerNorm()(h)
    if norm_type == "batch_norm":
        return lambda h: nn.BatchNorm(use_running_average=not train)(h)
    return lambda h: h


class QNetwork(nn.Module):
    """pqn_gymnax.py: [Dense -> norm -> relu] x num_layers -> Dense(action_dim)."""

    action_dim: int
    hidden_size: int = 128
    num_layers: int = 2
    norm_type: str = "layer_norm"
    norm_input: bool = False

    @nn.compact
    def __call__(self, x: jax.Array, train: bool) -> jax.Array:
        if self.norm_input:
            x = nn.BatchNorm(use_running_average=not train)(x)
        else:
            # Unused output: theirs keeps it so that a batch_stats collection always exists.
            nn.BatchNorm(use_running_average=not train)(x)
        norm = _normaliser(self.norm_type, train)
        for _ in range(self.num_layers):
            x = nn.relu(norm(nn.Dense(self.hidden_size)(x)))
        return nn.Dense(self.action_dim)(x)


class CNN(nn.Module):
    """pqn_minatar.py's torso: Conv(16, 3x3, VALID) -> norm -> relu -> Dense(128) -> norm -> relu,
    He-normal kernels."""

    norm_type: str = "layer_norm"

    @nn.compact
    def __call__(self, x: jax.Array, train: bool) -> jax.Array:
        norm = _normaliser(self.norm_type, train)
        x = nn.Conv(16, kernel_size=(3, 3), strides=1, padding="VALID",
                    kernel_init=nn.initializers.he_normal())(x)
        x = nn.relu(norm(x))
        x = x.reshape((x.shape[0], -1))
        x = nn.Dense(128, kernel_init=nn.initializers.he_normal())(x)
        return nn.relu(norm(x))


class CNNQNetwork(nn.Module):
    """pqn_minatar.py's QNetwork: (dummy input BatchNorm), x / 255, CNN, Dense(action_dim)."""

    action_dim: int
    norm_type: str = "layer_norm"
    norm_input: bool = False

    @nn.compact
    def __call__(self, x: jax.Array, train: bool) -> jax.Array:
        if self.norm_input:
            x = nn.BatchNorm(use_running_average=not train)(x)
        else:
            nn.BatchNorm(use_running_average=not train)(x)  # unused, as theirs
            x = x / 255.0  # theirs, although MinAtar observations are 0/1
        x = CNN(norm_type=self.norm_type)(x, train)
        return nn.Dense(self.action_dim)(x)


class Transition(NamedTuple):
    obs: jax.Array
    action: jax.Array
    reward: jax.Array
    done: jax.Array
    next_obs: jax.Array
    q_val: jax.Array


class CustomTrainState(TrainState):
    batch_stats: Any
    timesteps: int = 0
    n_updates: int = 0
    grad_steps: int = 0


# ---------------------------------------------------------------------------------------------


def make_train(config: dict) -> Callable[[jax.Array], dict]:
    """The whole PQN run as a pure function of a PRNG key: returns {"runner_state", "metrics"},
    metrics stacked over the NUM_UPDATES updates."""
    config = dict(config)
    if config.get("TEST_DURING_TRAINING", False):
        raise ValueError("TEST_DURING_TRAINING is not restated here; set it to False")
    config["NUM_UPDATES"] = config["TOTAL_TIMESTEPS"] // config["NUM_STEPS"] // config["NUM_ENVS"]
    config["NUM_UPDATES_DECAY"] = (
        config["TOTAL_TIMESTEPS_DECAY"] // config["NUM_STEPS"] // config["NUM_ENVS"])
    num_updates = int(config["NUM_UPDATES"])
    assert (config["NUM_STEPS"] * config["NUM_ENVS"]) % config["NUM_MINIBATCHES"] == 0, (
        "NUM_MINIBATCHES must divide NUM_STEPS*NUM_ENVS")
    cnn = config.get("NETWORK", "mlp") == "cnn"

    base_env, env_params = gymnax.make(config["ENV_NAME"])
    env = MergedDone(base_env) if cnn else FlattenObservation(MergedDone(base_env))
    env = LogWrapper(env)

    def vmap_reset(n_envs):
        return lambda rng: jax.vmap(env.reset, in_axes=(0, None))(
            jax.random.split(rng, n_envs), env_params)

    def vmap_step(n_envs):
        return lambda rng, env_state, action: jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            jax.random.split(rng, n_envs), env_state, action, env_params)

    def eps_greedy_exploration(rng, q_vals, eps):
        rng_a, rng_e = jax.random.split(rng)
        greedy = jnp.argmax(q_vals, axis=-1)
        return jnp.where(
            jax.random.uniform(rng_e, greedy.shape) < eps,
            jax.random.randint(rng_a, shape=greedy.shape, minval=0, maxval=q_vals.shape[-1]),
            greedy,
        )

    def train(rng):
        eps_scheduler = optax.linear_schedule(
            config["EPS_START"], config["EPS_FINISH"],
            config["EPS_DECAY"] * config["NUM_UPDATES_DECAY"])
        lr_scheduler = optax.linear_schedule(
            init_value=config["LR"], end_value=1e-20,
            transition_steps=config["NUM_UPDATES_DECAY"] * config["NUM_MINIBATCHES"]
            * config["NUM_EPOCHS"])
        lr = lr_scheduler if config.get("LR_LINEAR_DECAY", False) else config["LR"]

        action_dim = env.action_space(env_params).n
        if cnn:
            network = CNNQNetwork(action_dim=action_dim, norm_type=config["NORM_TYPE"],
                                  norm_input=config.get("NORM_INPUT", False))
        else:
            network = QNetwork(action_dim=action_dim,
                               hidden_size=config.get("HIDDEN_SIZE", 128),
                               num_layers=config.get("NUM_LAYERS", 2),
                               norm_type=config["NORM_TYPE"],
                               norm_input=config.get("NORM_INPUT", False))

        def create_agent(rng):
            init_x = jnp.zeros((1, *env.observation_space(env_params).shape))
            variables = network.init(rng, init_x, train=False)
            tx = optax.chain(optax.clip_by_global_norm(config["MAX_GRAD_NORM"]),
                             optax.radam(learning_rate=lr))
            return CustomTrainState.create(apply_fn=network.apply, params=variables["params"],
                                           batch_stats=variables["batch_stats"], tx=tx)

        rng, _rng = jax.random.split(rng)
        train_state = create_agent(rng)  # sic: theirs initialises from rng, not _rng

        def q_eval(train_state, obs):
            return network.apply(
                {"params": train_state.params, "batch_stats": train_state.batch_stats},
                obs, train=False)

        def _update_step(runner_state, unused):
            train_state, expl_state, test_metrics, rng = runner_state

            # Rollout: NUM_STEPS steps of NUM_ENVS envs, epsilon-greedy on the current network.
            def _step_env(carry, _):
                last_obs, env_state, rng = carry
                rng, rng_a, rng_s = jax.random.split(rng, 3)
                q_vals = q_eval(train_state, last_obs)
                _rngs = jax.random.split(rng_a, config["NUM_ENVS"])
                eps = jnp.full(config["NUM_ENVS"], eps_scheduler(train_state.n_updates))
                new_action = jax.vmap(eps_greedy_exploration)(_rngs, q_vals, eps)
                new_obs, new_env_state, reward, new_done, info = vmap_step(config["NUM_ENVS"])(
                    rng_s, env_state, new_action)
                transition = Transition(
                    obs=last_obs, action=new_action, reward=config.get("REW_SCALE", 1) * reward,
                    done=new_done, next_obs=new_obs, q_val=q_vals)
                return (new_obs, new_env_state, rng), (transition, info)

            rng, _rng = jax.random.split(rng)
            (*expl_state, rng), (transitions, infos) = jax.lax.scan(
                _step_env, (*expl_state, _rng), None, config["NUM_STEPS"])
            expl_state = tuple(expl_state)
            train_state = train_state.replace(
                timesteps=train_state.timesteps + config["NUM_STEPS"] * config["NUM_ENVS"])

            # Q(lambda) targets, backwards over the rollout.
            last_q = jnp.max(q_eval(train_state, transitions.next_obs[-1]), axis=-1)

            def _get_target(lambda_returns_and_next_q, transition):
                lambda_returns, next_q = lambda_returns_and_next_q
                target_bootstrap = (
                    transition.reward + config["GAMMA"] * (1 - transition.done) * next_q)
                delta = lambda_returns - next_q
                lambda_returns = target_bootstrap + config["GAMMA"] * config["LAMBDA"] * delta
                lambda_returns = ((1 - transition.done) * lambda_returns
                                  + transition.done * transition.reward)
                next_q = jnp.max(transition.q_val, axis=-1)
                return (lambda_returns, next_q), lambda_returns

            last_q = last_q * (1 - transitions.done[-1])
            lambda_returns = transitions.reward[-1] + config["GAMMA"] * last_q
            _, targets = jax.lax.scan(
                _get_target, (lambda_returns, last_q),
                jax.tree_util.tree_map(lambda x: x[:-1], transitions), reverse=True)
            lambda_targets = jnp.concatenate((targets, lambda_returns[np.newaxis]))

            # NUM_EPOCHS passes over the reshuffled rollout, NUM_MINIBATCHES steps each.
            def _learn_epoch(carry, _):
                train_state, rng = carry

                def _learn_phase(carry, minibatch_and_target):
                    train_state, rng = carry
                    minibatch, target = minibatch_and_target

                    def _loss_fn(params):
                        q_vals, updates = network.apply(
                            {"params": params, "batch_stats": train_state.batch_stats},
                            minibatch.obs, train=True, mutable=["batch_stats"])
                        chosen = jnp.take_along_axis(
                            q_vals, jnp.expand_dims(minibatch.action, axis=-1), axis=-1,
                        ).squeeze(axis=-1)
                        loss = 0.5 * jnp.square(chosen - target).mean()
                        return loss, (updates, chosen)

                    (loss, (updates, qvals)), grads = jax.value_and_grad(
                        _loss_fn, has_aux=True)(train_state.params)
                    train_state = train_state.apply_gradients(grads=grads)
                    train_state = train_state.replace(
                        grad_steps=train_state.grad_steps + 1,
                        batch_stats=updates["batch_stats"])
                    return (train_state, rng), (loss, qvals)

                def preprocess_transition(x, rng):
                    x = x.reshape(-1, *x.shape[2:])
                    x = jax.random.permutation(rng, x)
                    return x.reshape(config["NUM_MINIBATCHES"], -1, *x.shape[1:])

                rng, _rng = jax.random.split(rng)
                minibatches = jax.tree_util.tree_map(
                    lambda x: preprocess_transition(x, _rng), transitions)
                targets = jax.tree_util.tree_map(
                    lambda x: preprocess_transition(x, _rng), lambda_targets)
                rng, _rng = jax.random.split(rng)
                (train_state, rng), (loss, qvals) = jax.lax.scan(
                    _learn_phase, (train_state, rng), (minibatches, targets))
                return (train_state, rng), (loss, qvals)

            rng, _rng = jax.random.split(rng)
            (train_state, rng), (loss, qvals) = jax.lax.scan(
                _learn_epoch, (train_state, rng), None, config["NUM_EPOCHS"])

            train_state = train_state.replace(n_updates=train_state.n_updates + 1)
            metrics = {
                "env_step": train_state.timesteps,
                "update_steps": train_state.n_updates,
                "grad_steps": train_state.grad_steps,
                "td_loss": loss.mean(),
                "qvals": qvals.mean(),
            }
            if cnn:
                metrics["env_frame"] = (
                    train_state.timesteps * env.observation_space(env_params).shape[-1])
            metrics.update({k: v.mean() for k, v in infos.items()})
            # Not theirs: what final_return needs.
            metrics["episode_return_sum"] = jnp.sum(
                infos["returned_episode_returns"] * infos["returned_episode"])
            metrics["episode_count"] = jnp.sum(infos["returned_episode"])

            return (train_state, tuple(expl_state), test_metrics, rng), metrics

        # Theirs splits here for the initial test episodes even when they are off.
        rng, _rng = jax.random.split(rng)
        test_metrics = None

        rng, _rng = jax.random.split(rng)
        expl_state = vmap_reset(config["NUM_ENVS"])(_rng)

        rng, _rng = jax.random.split(rng)
        runner_state = (train_state, expl_state, test_metrics, _rng)
        runner_state, metrics = jax.lax.scan(_update_step, runner_state, None, num_updates)
        return {"runner_state": runner_state, "metrics": metrics}

    return train


def with_timesteps(config: dict, timesteps: int, decay_timesteps: int | None = None) -> dict:
    """A copy of `config` running `timesteps` env steps per seed, with the epsilon and
    learning-rate schedules spread over `decay_timesteps` (default: the same)."""
    return {**config, "TOTAL_TIMESTEPS": timesteps,
            "TOTAL_TIMESTEPS_DECAY": timesteps if decay_timesteps is None else decay_timesteps}


def final_return(out: dict) -> float:
    """Mean return of the training episodes that ended in the last 5% of updates (at least one
    update), per seed, averaged over seeds. `out` is the vmapped output of `make_train`."""
    m = out["metrics"]
    ret_sum = np.asarray(m["episode_return_sum"]).reshape(-1, np.shape(m["episode_count"])[-1])
    count = np.asarray(m["episode_count"]).reshape(ret_sum.shape)
    w = max(1, ret_sum.shape[1] // 20)
    per_seed = ret_sum[:, -w:].sum(1) / np.maximum(count[:, -w:].sum(1), 1)
    return float(np.mean(per_seed))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", choices=sorted(CONFIGS), default="cartpole")
    ap.add_argument("--seeds", type=int, default=None, help="default: NUM_SEEDS (1)")
    ap.add_argument("--timesteps", type=int, default=None, help="TOTAL_TIMESTEPS")
    ap.add_argument("--decay-timesteps", type=int, default=None,
                    help="TOTAL_TIMESTEPS_DECAY (default: --timesteps, else the yaml's)")
    ap.add_argument("--seed", type=int, default=None, help="default: SEED (0)")
    a = ap.parse_args()

    config = dict(CONFIGS[a.config])
    if a.timesteps is not None:
        config = with_timesteps(config, a.timesteps, a.decay_timesteps)
    elif a.decay_timesteps is not None:
        config["TOTAL_TIMESTEPS_DECAY"] = a.decay_timesteps
    if a.seeds is not None:
        config["NUM_SEEDS"] = a.seeds
    if a.seed is not None:
        config["SEED"] = a.seed

    rngs = jax.random.split(jax.random.PRNGKey(config["SEED"]), config["NUM_SEEDS"])
    t0 = time.perf_counter()
    fn = jax.jit(jax.vmap(make_train(config))).lower(rngs).compile()
    compile_s = time.perf_counter() - t0
    print(f"jax {jax.__version__} {jax.devices()[0].platform}: {a.config} ({config['ENV_NAME']}), "
          f"TOTAL_TIMESTEPS {config['TOTAL_TIMESTEPS']}, "
          f"TOTAL_TIMESTEPS_DECAY {config['TOTAL_TIMESTEPS_DECAY']}: compiled in {compile_s:.1f}s; "
          "running", flush=True)
    t0 = time.perf_counter()
    out = jax.block_until_ready(fn(rngs))
    run_s = time.perf_counter() - t0
    n_upd = config["TOTAL_TIMESTEPS"] // config["NUM_STEPS"] // config["NUM_ENVS"]
    steps = config["NUM_SEEDS"] * n_upd * config["NUM_STEPS"] * config["NUM_ENVS"]
    print(f"ok: compile {compile_s:.1f}s run {run_s:.1f}s {steps / run_s:,.0f} steps/s "
          f"final return {final_return(out):.1f} ({config['NUM_SEEDS']} seeds, "
          f"{n_upd} updates of {config['NUM_STEPS'] * config['NUM_ENVS']} steps)", flush=True)


if __name__ == "__main__":
    main()
