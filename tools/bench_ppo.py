"""PPO throughput against rejax (an established JAX PPO from the package registry).

Both train CartPole-v1 with identical hyperparameters (4 envs x 128 steps, 4 epochs x 4
minibatches, gamma 0.99, lambda 0.95, clip 0.2, entropy 0.01, value 0.5, grad-norm 0.5, lr 2.5e-4,
two tanh layers of 64), in this one process, for 1 seed and for 64 vmapped seeds. Compile time and
run time are measured apart (`jit(...).lower(...).compile()`, then the compiled call until
`block_until_ready`); rejax's periodic evaluation is switched off so that both time training only.
Known differences that remain: rejax clips gradients element-wise and keeps a constant learning
rate with two optimisers (actor, critic); we clip by global norm and anneal the learning rate.

    uv run --group bench python tools/bench_ppo.py [--timesteps 500000] [--seeds 1,64]
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

HP = dict(num_envs=4, num_steps=128, num_epochs=4, num_minibatches=4, lr=2.5e-4, gamma=0.99,
          gae_lambda=0.95, clip_eps=0.2, ent_coef=0.01, vf_coef=0.5, max_grad_norm=0.5)


def ours(timesteps: int, n: int):
    import rl_envs
    from rl_algos import ppo
    from rl_algos.common import hparams_as_arrays

    cfg = ppo.PPOConfig(total_timesteps=timesteps, num_envs=HP["num_envs"],
                        num_steps=HP["num_steps"], num_epochs=HP["num_epochs"],
                        num_minibatches=HP["num_minibatches"], activation="tanh",
                        hidden_sizes=(64, 64))
    hp = hparams_as_arrays(ppo.PPOHParams(**{k: HP[k] for k in ppo.PPOHParams._fields}))
    train = ppo.make_train(rl_envs.make("gymnax/CartPole-v1"), cfg)
    hps = jax.tree.map(lambda x: jnp.broadcast_to(x, (n,)), hp)
    fn = jax.jit(jax.vmap(train))
    args = (jax.random.split(jax.random.PRNGKey(0), n), hps)

    def final_return(out):
        m = out.metrics
        w = max(1, m["episode_count"].shape[1] // 20)
        return float(np.mean(np.sum(m["episode_return_sum"][:, -w:], 1)
                             / np.maximum(np.sum(m["episode_count"][:, -w:], 1), 1)))

    return fn, args, final_return


class FiveTupleEnv:
    """rejax 0.1.3 unpacks gymnax's pre-1.0 `step` 5-tuple `(obs, state, reward, done, info)`;
    gymnax 1.0 returns `(obs, state, reward, terminated, truncated, info)`. This shim merges the two
    flags back into `done` (exactly what rejax expects) and delegates everything else."""

    def __init__(self, env):
        self._env = env

    def step(self, key, state, action, params=None):
        obs, state, reward, term, trunc, info = self._env.step(key, state, action, params)
        return obs, state, reward, jnp.logical_or(term, trunc), info

    def __getattr__(self, name):
        if name.startswith("__") or name == "_env":  # deepcopy/pickle probe dunders first
            raise AttributeError(name)
        return getattr(self._env, name)


def rejax_ppo(timesteps: int, n: int):
    import gymnax
    from rejax import PPO

    env, env_params = gymnax.make("CartPole-v1")
    algo = PPO.create(
        env=FiveTupleEnv(env), env_params=env_params, total_timesteps=timesteps,
        eval_freq=timesteps,
        skip_initial_evaluation=True, num_envs=HP["num_envs"], num_steps=HP["num_steps"],
        num_epochs=HP["num_epochs"], num_minibatches=HP["num_minibatches"],
        learning_rate=HP["lr"], gamma=HP["gamma"], gae_lambda=HP["gae_lambda"],
        clip_eps=HP["clip_eps"], ent_coef=HP["ent_coef"], vf_coef=HP["vf_coef"],
        max_grad_norm=HP["max_grad_norm"],
        agent_kwargs=dict(activation="tanh", hidden_layer_sizes=(64, 64)),
    )
    # Evaluation off: training only, as for ours. The final policy is evaluated afterwards.
    algo = algo.replace(eval_callback=lambda a, ts, rng: jnp.zeros(()))
    fn = jax.jit(jax.vmap(lambda k: algo.train(k)[0]))
    args = (jax.random.split(jax.random.PRNGKey(0), n),)

    def final_return(ts):
        from rejax.evaluate import evaluate

        def ev(t, k):
            return evaluate(algo.make_act(t), k, algo.env, algo.env_params, 64,
                            algo.env_params.max_steps_in_episode)[1].mean()
        keys = jax.random.split(jax.random.PRNGKey(1), n)
        return float(jnp.mean(jax.jit(jax.vmap(ev))(ts, keys)))

    return fn, args, final_return


def measure(make, timesteps: int, n: int, repeats: int) -> dict:
    fn, args, final_return = make(timesteps, n)
    t0 = time.perf_counter()
    compiled = fn.lower(*args).compile()
    compile_s = time.perf_counter() - t0
    runs = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = jax.block_until_ready(compiled(*args))
        runs.append(time.perf_counter() - t0)
    run_s = float(np.median(runs))
    return dict(compile=compile_s, run=run_s, sps=n * timesteps / run_s, ret=final_return(out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timesteps", type=int, default=500_000)
    ap.add_argument("--seeds", default="1,64")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    print(f"jax {jax.__version__}, {jax.devices()[0].device_kind}, "
          f"CartPole-v1, {a.timesteps:,} steps per seed")
    print(f"{'seeds':>5} {'impl':>6} {'compile s':>10} {'run s':>8} {'steps/s':>12} {'return':>7}")
    for n in [int(s) for s in a.seeds.split(",")]:
        res = {}
        for name, make in (("ours", ours), ("rejax", rejax_ppo)):
            r = measure(make, a.timesteps, n, a.repeats)
            res[name] = r
            print(f"{n:>5} {name:>6} {r['compile']:>10.2f} {r['run']:>8.2f} {r['sps']:>12,.0f} "
                  f"{r['ret']:>7.1f}", flush=True)
        print(f"{n:>5} ratio  run time ours/rejax = {res['ours']['run'] / res['rejax']['run']:.2f}x"
              f", compile ours/rejax = {res['ours']['compile'] / res['rejax']['compile']:.2f}x",
              flush=True)


if __name__ == "__main__":
    main()
