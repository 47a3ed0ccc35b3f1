"""TD3 throughput against rejax's TD3 (JAX) and stable-baselines3's TD3 (PyTorch, CPU).

All three train Pendulum-v1 with the same hyperparameters: one environment, one critic step per
environment step (update-to-data 1), an actor step and a Polyak update (tau 0.005) every second
critic step, batch 256, buffer 100k, 1,000 uniformly random warm-up steps, Adam 1e-3 for both
networks, gamma 0.99, two ReLU layers of 64 for actor and critics, exploration noise N(0, 0.1) and
target-policy noise N(0, 0.2) clipped to ±0.5 in units of half the action range (rejax takes noise
in action units: Pendulum's range is [-2, 2], so its values are doubled).

ours and rejax run in this process, one after the other, compile apart from run
(`jit(...).lower(...).compile()`, then the compiled call until `block_until_ready`); rejax's
periodic evaluation is off. Both are one member through `rl_core.map_members`, as `rl run` trains
one seed: unbatched, not a vmap of size 1 (which costs each of them a few percent on the CPU).
stable-baselines3 runs in a subprocess of a separate virtual environment (created on demand with
pip: torch's CPU wheel, stable-baselines3, gymnasium) with
OMP_NUM_THREADS=1 and torch.set_num_threads(1); its time is `model.learn` alone (model construction
apart); it runs as many steps as the others unless `--sb3-timesteps` says fewer (a quicker,
rougher look: its 1,000 warm-up steps are then a larger, cheaper share). All are compared per
1e4 environment steps. The machine's speed drifts during SB3's minutes-long run, so ours is timed
before and after it, and its row (and every ratio) uses the mean of the two.
Wall time and CPU time (every thread of the process) are both reported: on a shared machine the
wall time depends on the share of the cores each process gets, the CPU time much less.

Final returns: ours, the mean of the training episodes (with exploration noise) of the last 5% of
steps; rejax and ours-greedy, 64 evaluation episodes of the deterministic policy; SB3, the mean of
its last 20 training episodes (with noise).

    uv run --group bench python tools/bench_td3.py [--timesteps 100000] [--sb3-timesteps N]
        [--sb3-venv /tmp/sb3venv] [--skip-sb3] [--learn-only]

On Linux, `taskset -c 0 uv run ...` gives every implementation one core (SB3's subprocess
inherits it and runs one thread anyway): XLA's executor otherwise hands some kernels of ours to a
second thread, which costs CPU time and, for programs of kernels this small, a little wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import rl_core
from rl_core import map_members

HP = dict(num_envs=1, batch_size=256, buffer_size=100_000, learning_starts=1_000, lr=1e-3,
          gamma=0.99, tau=0.005, exploration_noise=0.1, target_noise=0.2, target_noise_clip=0.5,
          policy_delay=2, hidden=(64, 64))
HALF_RANGE = 2.0  # Pendulum-v1 actions lie in [-2, 2]


def greedy_return(policy, params, n_episodes: int = 64) -> float:
    """Mean return of `n_episodes` Pendulum episodes with `policy(params, obs) -> action`."""
    import gymnax
    from bench_ppo import FiveTupleEnv
    from rejax.evaluate import evaluate

    env, env_params = gymnax.make("Pendulum-v1")
    _, returns = jax.jit(lambda p, k: evaluate(
        lambda obs, rng: policy(p, obs), k, FiveTupleEnv(env), env_params, n_episodes,
        env_params.max_steps_in_episode))(params, jax.random.PRNGKey(1))
    return float(jnp.mean(returns))


def our_hparams():
    """`HP` as our TD3's hyperparameter arrays (shared by the training run and `learn_only`)."""
    from rl_algos.common import hparams_as_arrays
    from rl_algos.td3 import TD3HParams

    return hparams_as_arrays(TD3HParams(
        actor_lr=HP["lr"], critic_lr=HP["lr"], gamma=HP["gamma"], tau=HP["tau"],
        exploration_noise=HP["exploration_noise"], target_noise=HP["target_noise"],
        target_noise_clip=HP["target_noise_clip"]))


def ours(timesteps: int):
    import rl_envs
    from rl_algos import td3

    env = rl_envs.make("gymnax/Pendulum-v1")
    # One env: two environment steps per update carry the two critic steps of one policy delay.
    cfg = td3.TD3Config(total_timesteps=timesteps, num_envs=1, num_steps=HP["policy_delay"],
                        gradient_steps=HP["policy_delay"], policy_delay=HP["policy_delay"],
                        batch_size=HP["batch_size"], buffer_size=HP["buffer_size"],
                        learning_starts=HP["learning_starts"], hidden_sizes=HP["hidden"],
                        activation="relu")
    hp = our_hparams()
    fn = jax.jit(map_members(td3.make_train(env, cfg)))
    args = (jax.random.split(jax.random.PRNGKey(0), 1),
            jax.tree.map(lambda x: x[None], hp))
    policy = td3.make_policy(env, cfg)

    def greedy(actor, obs):
        agent = rl_core.Agent(td3.TD3Params(actor, None))
        return policy.act(agent, obs[None], None, True)[0][0]

    def final_return(out) -> dict:
        m = out.metrics
        train = float(rl_core.final_return(np.asarray(m["episode_return_sum"][0]),
                                           np.asarray(m["episode_count"][0])))
        actor = jax.tree.map(lambda x: x[0], out.state.train_state.params.actor)
        return dict(train=train, greedy=greedy_return(greedy, actor))

    return fn, args, final_return


def rejax_td3(timesteps: int):
    import gymnax
    from bench_ppo import FiveTupleEnv
    from rejax import TD3

    env, env_params = gymnax.make("Pendulum-v1")
    algo = TD3.create(
        env=FiveTupleEnv(env), env_params=env_params, total_timesteps=timesteps,
        eval_freq=timesteps, skip_initial_evaluation=True, num_envs=HP["num_envs"],
        num_epochs=1, buffer_size=HP["buffer_size"], fill_buffer=HP["learning_starts"],
        batch_size=HP["batch_size"], learning_rate=HP["lr"], gamma=HP["gamma"],
        polyak=1.0 - HP["tau"], policy_delay=HP["policy_delay"],
        exploration_noise=HP["exploration_noise"] * HALF_RANGE,
        target_noise=HP["target_noise"] * HALF_RANGE,
        target_noise_clip=HP["target_noise_clip"] * HALF_RANGE,
        actor_kwargs=dict(activation="relu"), critic_kwargs=dict(activation="relu"),
    )
    algo = algo.replace(eval_callback=lambda a, ts, rng: jnp.zeros(()))
    fn = jax.jit(map_members(lambda k: algo.train(k)[0]))
    args = (jax.random.split(jax.random.PRNGKey(0), 1),)

    def final_return(ts) -> dict:
        one = jax.tree.map(lambda x: x[0], ts)
        return dict(train=float("nan"),
                    greedy=greedy_return(lambda t, obs: algo.make_act(t)(obs, None), one))

    return fn, args, final_return


def cpu_seconds() -> float:
    """CPU time of this process, every thread included (user + system)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure(make, timesteps: int) -> tuple[dict, object]:
    """Compiles and runs one implementation; returns its figures and a `rerun()` that times the
    compiled program once more (`(wall s, CPU s)`)."""
    fn, args, final_return = make(timesteps)
    t0 = time.perf_counter()
    compiled = fn.lower(*args).compile()
    compile_s = time.perf_counter() - t0

    def rerun():
        t0, c0 = time.perf_counter(), cpu_seconds()
        out = jax.block_until_ready(compiled(*args))
        return time.perf_counter() - t0, cpu_seconds() - c0, out

    run_s, cpu_s, out = rerun()
    return (dict(compile=compile_s, run=run_s, cpu=cpu_s, steps=timesteps, **final_return(out)),
            lambda: rerun()[:2])


SB3_SCRIPT = r"""
import json, sys, time
import torch
torch.set_num_threads(1)
import gymnasium as gym
import numpy as np
from stable_baselines3 import TD3
from stable_baselines3.common.noise import NormalActionNoise

hp, steps = json.loads(sys.argv[1]), int(sys.argv[2])
t0 = time.perf_counter()
env = gym.make("Pendulum-v1")
half = float(env.action_space.high[0])
model = TD3("MlpPolicy", env, learning_rate=hp["lr"], buffer_size=hp["buffer_size"],
            learning_starts=hp["learning_starts"], batch_size=hp["batch_size"], tau=hp["tau"],
            gamma=hp["gamma"], train_freq=1, gradient_steps=1, policy_delay=hp["policy_delay"],
            action_noise=NormalActionNoise(np.zeros(1),
                                           hp["exploration_noise"] * half * np.ones(1)),
            target_policy_noise=hp["target_noise"], target_noise_clip=hp["target_noise_clip"],
            policy_kwargs=dict(net_arch=list(hp["hidden"])), device="cpu", seed=0, verbose=0)
setup = time.perf_counter() - t0
t0, c0 = time.perf_counter(), time.process_time()
model.learn(total_timesteps=steps)
run, cpu = time.perf_counter() - t0, time.process_time() - c0
rets = [ep["r"] for ep in model.ep_info_buffer]
print("SB3RESULT " + json.dumps(dict(setup=setup, run=run, cpu=cpu, steps=steps,
      train=float(np.mean(rets)) if rets else float("nan"), torch=torch.__version__)))
"""


def ensure_sb3_venv(path: Path) -> Path:
    """The venv's python, created with pip on first use (torch's local CPU wheel)."""
    python = path / "bin" / "python"
    probe = [str(python), "-c", "import stable_baselines3, gymnasium, torch"]
    if python.exists() and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f"creating {path} (torch 2.13 CPU, stable-baselines3, gymnasium) ...", flush=True)
    subprocess.run(["python3", "-m", "venv", str(path)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "torch==2.13.0",
                    "stable-baselines3", "gymnasium"], check=True)
    return python


def sb3(python: Path, timesteps: int) -> dict:
    # NB: SB3's action noise is in action units; hp carries the relative value, scaled inside.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run([str(python), "-c", SB3_SCRIPT, json.dumps(HP), str(timesteps)],
                          capture_output=True, text=True, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("SB3RESULT ")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"the stable-baselines3 run failed:\n{proc.stderr[-2000:]}")
    r = json.loads(lines[-1].removeprefix("SB3RESULT "))
    return dict(compile=r["setup"], run=r["run"], cpu=r["cpu"], steps=r["steps"], train=r["train"],
                greedy=float("nan"), torch=r["torch"])


def learn_only(timesteps: int) -> float:
    """Wall seconds per 1e4 steps of TD3's learning arithmetic alone, at the settings above: the
    `learn` that training calls (`rl_algos.td3.train.make_learn`: per environment step one
    critic step, per `policy_delay` steps one actor step and the Polyak update of both targets)
    in a `lax.scan` over one fixed batch of `policy_delay` minibatches and one fixed smoothing-
    noise draw (no environment, buffer, sampling or random numbers). It bounds what any change
    outside the networks' arithmetic could gain."""
    import equinox as eqx

    from rl_algos.common.dense import TwinCritic
    from rl_algos.td3.networks import Actor
    from rl_algos.td3.train import TD3Params, make_learn, optimizers

    key, b, h, d = jax.random.PRNGKey(0), HP["batch_size"], HP["hidden"], HP["policy_delay"]
    actor, a_static = eqx.partition(Actor(key, 3, 1, h, "relu"), eqx.is_array)
    critic, c_static = eqx.partition(TwinCritic(key, 3, 1, h, "relu"), eqx.is_array)
    hp = our_hparams()
    learn = make_learn(a_static, c_static, d)
    ks = jax.random.split(key, 4)
    batch = {"obs": jax.random.normal(ks[0], (1, d, b, 3)),
             "action": jnp.tanh(jax.random.normal(ks[1], (1, d, b, 1))),
             "reward": jax.random.normal(ks[2], (1, d, b)),
             "terminated": jnp.zeros((1, d, b), bool),
             "next_obs": jax.random.normal(ks[3], (1, d, b, 3))}
    z = jax.random.normal(key, (1, d, b, 1))
    params = TD3Params(actor, critic)

    @jax.jit
    def run(hp):
        def group(carry, _):
            p, o, t = carry
            p, o, t, _ = learn(hp, p, o, t, batch, z)
            return (p, o, t), None

        actor_tx, critic_tx = optimizers(hp)
        init = (params, (actor_tx.init(actor), critic_tx.init(critic)), params)
        return jax.lax.scan(group, init, length=timesteps // d)[0]

    jax.block_until_ready(run(hp))
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        jax.block_until_ready(run(hp))
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) / timesteps * 1e4


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timesteps", type=int, default=100_000)
    ap.add_argument("--sb3-timesteps", type=int, default=None,
                    help="steps for SB3 (default: --timesteps, identical step counts)")
    ap.add_argument("--sb3-venv", type=Path, default=Path("/tmp/sb3venv"))
    ap.add_argument("--skip-sb3", action="store_true")
    ap.add_argument("--learn-only", action="store_true",
                    help="also time the learning arithmetic alone (see learn_only)")
    a = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).parent))  # bench_ppo's FiveTupleEnv shim
    print(f"jax {jax.__version__}, {jax.devices()[0].device_kind}, Pendulum-v1, 1 env, "
          f"update-to-data 1, hparams {HP}", flush=True)
    res, rerun = {}, {}
    for name, make in (("ours", ours), ("rejax", rejax_td3)):
        res[name], rerun[name] = measure(make, a.timesteps)
        print(name, json.dumps(res[name]), flush=True)
    if not a.skip_sb3:
        res["sb3"] = sb3(ensure_sb3_venv(a.sb3_venv), a.sb3_timesteps or a.timesteps)
        print("sb3", json.dumps(res["sb3"]), flush=True)
        # The machine's speed drifts over SB3's minutes-long run: time ours again after it and
        # compare SB3 with the mean of ours before and after (both printed).
        wall, cpu = rerun["ours"]()
        us = res["ours"]
        print(f"ours after sb3: run {wall:.2f} s, cpu {cpu:.2f} s (before: run {us['run']:.2f} s,"
              f" cpu {us['cpu']:.2f} s); the table's ours row is their mean", flush=True)
        us["run"], us["cpu"] = (us["run"] + wall) / 2, (us["cpu"] + cpu) / 2
    print(f"\n{'impl':>6} {'steps':>8} {'compile/setup s':>16} {'run s':>8} {'s per 1e4':>10} "
          f"{'cpu s per 1e4':>14} {'train ret':>10} {'greedy ret':>11}")
    for name, r in res.items():
        r["per1e4"] = r["run"] / r["steps"] * 1e4
        r["cpu1e4"] = r["cpu"] / r["steps"] * 1e4
        print(f"{name:>6} {r['steps']:>8,} {r['compile']:>16.2f} {r['run']:>8.2f} "
              f"{r['per1e4']:>10.2f} {r['cpu1e4']:>14.2f} {r['train']:>10.1f} "
              f"{r['greedy']:>11.1f}")
    if a.learn_only:
        t = learn_only(a.timesteps)
        print(f"ours, learning arithmetic alone: {t:.2f} s per 1e4 steps "
              f"({t / res['ours']['per1e4']:.0%} of the whole program)")
    for other in [k for k in ("rejax", "sb3") if k in res]:
        o, us = res[other], res["ours"]
        print(f"ours vs {other}: wall time per 1e4 steps {us['per1e4'] / o['per1e4']:.2f}x "
              f"(speed-up {o['per1e4'] / us['per1e4']:.1f}x), CPU time per 1e4 steps "
              f"{us['cpu1e4'] / o['cpu1e4']:.2f}x (speed-up {o['cpu1e4'] / us['cpu1e4']:.1f}x); "
              f"compile/setup {us['compile'] / o['compile']:.2f}x")


if __name__ == "__main__":
    main()
