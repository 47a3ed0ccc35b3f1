"""Cross-check for docs/stress-many-seeds.md: a PureJaxRL-style single-file PPO (flax + distrax +
optax + gymnax CartPole-v1, written from scratch after PureJaxRL's `ppo.py`), the whole run as one
`jax.jit(jax.vmap(make_train(config)))(rngs)` program, run once in this process.

On jax 0.10.2 (CPU, 2 cores) it can hang in `block_until_ready` for the same reason as ours: the
network's orthogonal initialisers become batched LAPACK QRs under `vmap`, and two of them running
at once deadlock jaxlib's `ParallelBatchMap` on the intra-op thread pool. `--seq-orthogonal`
wraps every orthogonal initialiser in `jax.custom_batching.sequential_vmap` (the fix); `NPROC=1`
in the environment (a pool of one thread) is the other workaround.

    uv run --group bench python tools/purejaxrl_ppo_repro.py [--seeds 64] [--timesteps 100000]
        [--seq-orthogonal]
    # 5 fresh processes:
    for i in 1 2 3 4 5; do timeout 300 uv run --group bench python tools/purejaxrl_ppo_repro.py \
        || echo "run $i: HUNG or failed"; done
"""

from __future__ import annotations

import argparse
import faulthandler
import signal
import time
from typing import NamedTuple

import distrax
import flax.linen as nn
import gymnax
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax.linen.initializers import constant, orthogonal
from flax.training.train_state import TrainState


def make_ortho(seq: bool):
    def ortho(scale):
        init = orthogonal(scale)
        if not seq:
            return init

        def seq_init(key, shape, dtype=jnp.float32):
            return jax.custom_batching.sequential_vmap(lambda k: init(k, shape, dtype))(key)

        return seq_init

    return ortho


class ActorCritic(nn.Module):
    action_dim: int
    seq_orthogonal: bool = False

    @nn.compact
    def __call__(self, x):
        ortho = make_ortho(self.seq_orthogonal)
        a = nn.tanh(nn.Dense(64, kernel_init=ortho(np.sqrt(2)), bias_init=constant(0.0))(x))
        a = nn.tanh(nn.Dense(64, kernel_init=ortho(np.sqrt(2)), bias_init=constant(0.0))(a))
        a = nn.Dense(self.action_dim, kernel_init=ortho(0.01), bias_init=constant(0.0))(a)
        c = nn.tanh(nn.Dense(64, kernel_init=ortho(np.sqrt(2)), bias_init=constant(0.0))(x))
        c = nn.tanh(nn.Dense(64, kernel_init=ortho(np.sqrt(2)), bias_init=constant(0.0))(c))
        c = nn.Dense(1, kernel_init=ortho(1.0), bias_init=constant(0.0))(c)
        return distrax.Categorical(logits=a), jnp.squeeze(c, axis=-1)


class Transition(NamedTuple):
    done: jax.Array
    action: jax.Array
    value: jax.Array
    reward: jax.Array
    log_prob: jax.Array
    obs: jax.Array
    ep_return: jax.Array


def make_train(config):
    env, env_params = gymnax.make("CartPole-v1")
    num_updates = config["TOTAL_TIMESTEPS"] // config["NUM_STEPS"] // config["NUM_ENVS"]
    mb_size = config["NUM_ENVS"] * config["NUM_STEPS"] // config["NUM_MINIBATCHES"]

    def linear_schedule(count):
        frac = 1.0 - (count // (config["NUM_MINIBATCHES"] * config["UPDATE_EPOCHS"])) / num_updates
        return config["LR"] * frac

    def env_reset(key):
        return jax.vmap(env.reset, in_axes=(0, None))(
            jax.random.split(key, config["NUM_ENVS"]), env_params)

    def env_step(key, state, action, ret):
        # gymnax >= 1.0: (obs, state, reward, terminated, truncated, info); auto-resets.
        obs, state, reward, term, trunc, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            jax.random.split(key, config["NUM_ENVS"]), state, action, env_params)
        done = jnp.logical_or(term, trunc)
        ret = ret + reward
        return obs, state, reward, done, ret, jnp.where(done, 0.0, ret)

    def train(rng):
        network = ActorCritic(env.action_space(env_params).n, config["SEQ_ORTHOGONAL"])
        rng, _rng = jax.random.split(rng)
        params = network.init(_rng, jnp.zeros(env.observation_space(env_params).shape))
        tx = optax.chain(optax.clip_by_global_norm(config["MAX_GRAD_NORM"]),
                         optax.adam(learning_rate=linear_schedule, eps=1e-5))
        train_state = TrainState.create(apply_fn=network.apply, params=params, tx=tx)
        rng, _rng = jax.random.split(rng)
        obsv, env_state = env_reset(_rng)
        ret = jnp.zeros(config["NUM_ENVS"])

        def _update_step(runner_state, unused):
            def _env_step(runner_state, unused):
                train_state, env_state, last_obs, ret, rng = runner_state
                rng, _rng = jax.random.split(rng)
                pi, value = network.apply(train_state.params, last_obs)
                action = pi.sample(seed=_rng)
                log_prob = pi.log_prob(action)
                rng, _rng = jax.random.split(rng)
                obsv, env_state, reward, done, ep_ret, ret = env_step(_rng, env_state, action, ret)
                tr = Transition(done, action, value, reward, log_prob, last_obs,
                                jnp.where(done, ep_ret, 0.0))
                return (train_state, env_state, obsv, ret, rng), tr

            runner_state, traj = jax.lax.scan(_env_step, runner_state, None, config["NUM_STEPS"])
            train_state, env_state, last_obs, ret, rng = runner_state
            _, last_val = network.apply(train_state.params, last_obs)

            def _gae(gae_and_next, tr):
                gae, next_value = gae_and_next
                delta = tr.reward + config["GAMMA"] * next_value * (1 - tr.done) - tr.value
                gae = delta + config["GAMMA"] * config["GAE_LAMBDA"] * (1 - tr.done) * gae
                return (gae, tr.value), gae

            _, adv = jax.lax.scan(_gae, (jnp.zeros_like(last_val), last_val), traj,
                                  reverse=True, unroll=16)
            targets = adv + traj.value

            def _update_epoch(update_state, unused):
                def _update_minibatch(train_state, batch):
                    tr, adv, targets = batch

                    def _loss_fn(params):
                        pi, value = network.apply(params, tr.obs)
                        log_prob = pi.log_prob(tr.action)
                        v_clip = tr.value + (value - tr.value).clip(-config["CLIP_EPS"],
                                                                    config["CLIP_EPS"])
                        v_loss = 0.5 * jnp.maximum(jnp.square(value - targets),
                                                   jnp.square(v_clip - targets)).mean()
                        ratio = jnp.exp(log_prob - tr.log_prob)
                        a = (adv - adv.mean()) / (adv.std() + 1e-8)
                        pg = -jnp.minimum(ratio * a, jnp.clip(ratio, 1.0 - config["CLIP_EPS"],
                                                              1.0 + config["CLIP_EPS"]) * a).mean()
                        return pg + config["VF_COEF"] * v_loss - config["ENT_COEF"] * (
                            pi.entropy().mean())

                    grads = jax.grad(_loss_fn)(train_state.params)
                    return train_state.apply_gradients(grads=grads), None

                train_state, traj, adv, targets, rng = update_state
                rng, _rng = jax.random.split(rng)
                batch_size = mb_size * config["NUM_MINIBATCHES"]
                perm = jax.random.permutation(_rng, batch_size)
                batch = jax.tree.map(lambda x: x.reshape((batch_size,) + x.shape[2:]),
                                     (traj, adv, targets))
                mbs = jax.tree.map(lambda x: jnp.take(x, perm, axis=0).reshape(
                    [config["NUM_MINIBATCHES"], -1] + list(x.shape[1:])), batch)
                train_state, _ = jax.lax.scan(_update_minibatch, train_state, mbs)
                return (train_state, traj, adv, targets, rng), None

            update_state = (train_state, traj, adv, targets, rng)
            update_state, _ = jax.lax.scan(_update_epoch, update_state, None,
                                           config["UPDATE_EPOCHS"])
            train_state, rng = update_state[0], update_state[-1]
            metric = (traj.ep_return.sum(), traj.done.sum())
            return (train_state, env_state, last_obs, ret, rng), metric

        rng, _rng = jax.random.split(rng)
        runner_state = (train_state, env_state, obsv, ret, _rng)
        runner_state, metric = jax.lax.scan(_update_step, runner_state, None, num_updates)
        return {"runner_state": runner_state, "metrics": metric}

    return train


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=64)
    ap.add_argument("--timesteps", type=int, default=100_000)
    ap.add_argument("--seq-orthogonal", action="store_true")
    a = ap.parse_args()
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    config = dict(LR=2.5e-4, NUM_ENVS=4, NUM_STEPS=128, TOTAL_TIMESTEPS=a.timesteps,
                  UPDATE_EPOCHS=4, NUM_MINIBATCHES=4, GAMMA=0.99, GAE_LAMBDA=0.95, CLIP_EPS=0.2,
                  ENT_COEF=0.01, VF_COEF=0.5, MAX_GRAD_NORM=0.5, SEQ_ORTHOGONAL=a.seq_orthogonal)
    rngs = jax.random.split(jax.random.PRNGKey(42), a.seeds)
    t0 = time.perf_counter()
    fn = jax.jit(jax.vmap(make_train(config))).lower(rngs).compile()
    compile_s = time.perf_counter() - t0
    print(f"jax {jax.__version__}: compiled in {compile_s:.1f}s; running", flush=True)
    t0 = time.perf_counter()
    out = jax.block_until_ready(fn(rngs))
    run_s = time.perf_counter() - t0
    ret_sum, count = (np.asarray(x) for x in out["metrics"])
    w = max(1, ret_sum.shape[1] // 20)
    ret = np.mean(ret_sum[:, -w:].sum(1) / np.maximum(count[:, -w:].sum(1), 1))
    steps = a.seeds * (a.timesteps // 512) * 512
    print(f"ok: compile {compile_s:.1f}s run {run_s:.1f}s {steps / run_s:,.0f} steps/s "
          f"return {ret:.1f}", flush=True)


if __name__ == "__main__":
    main()
