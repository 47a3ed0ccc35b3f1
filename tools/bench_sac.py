"""SAC throughput against rejax's SAC (JAX) and stable-baselines3's SAC (PyTorch, CPU).

All three train Pendulum-v1 at our `classic_control` preset's settings (`rl_algos.sac.PRESETS`):
one environment, one gradient step per environment step (update-to-data 1), each a critic, an
actor and a temperature step followed by a Polyak update of the target critics (tau 0.005, every
step), batch 256, buffer 20,000 (the preset's: the whole default run), learning from the 1,001st
environment step, Adam 3e-4 for actor, critics and temperature, gamma 0.99, initial temperature
1, target entropy -|A| = -1, two ReLU layers of 64 for the actor and each of the two critics.

How each setting is given to each implementation (ours: `SACConfig` / `SACHParams`; rejax 0.1.3:
`rejax.SAC.create`; SB3: `stable_baselines3.SAC`):

- one environment: ours num_envs=1, num_steps=1; rejax num_envs=1; SB3 one gymnasium env.
- update-to-data 1: ours gradient_steps=1; rejax num_epochs=1; SB3 train_freq=1,
  gradient_steps=1.
- batch: batch_size=256 in all three.
- buffer: buffer_size=20_000 in all three.
- learning starts: ours and SB3 learning_starts=1_000; rejax fill_buffer=1_000.
- learning rates: ours actor_lr=critic_lr=alpha_lr=3e-4; rejax learning_rate=3e-4 (one optax
  chain for all three); SB3 learning_rate=3e-4 (all three optimisers).
- Adam: optax's and torch's defaults (b1 0.9, b2 0.999, eps 1e-8) in all three.
- gamma=0.99 in all three.
- target critics: ours tau=0.005 every gradient step; rejax polyak=0.995, target_update_freq=1;
  SB3 tau=0.005, target_update_interval=1.
- temperature: ours init_alpha=1, target_entropy_per_dim=-1; rejax fixed at log_alpha=0 and
  target entropy -action_dim (checked at start-up); SB3 ent_coef="auto_1.0",
  target_entropy=-1.0.
- networks: ours hidden_sizes=(64, 64), activation="relu"; rejax hidden_layer_sizes=(64, 64),
  agent_kwargs=dict(activation="relu"); SB3 policy_kwargs=dict(net_arch=[64, 64],
  activation_fn=ReLU). The actor's last layer gives the mean and the log standard deviation
  (ours one layer of 2|A| outputs, rejax and SB3 two heads: the same function).
- gradient clipping: none in all three (rejax max_grad_norm=inf, its default).

In all three the first 1,000 environment steps store transitions without learning and the first
gradient step follows the 1,001st; the target entropy and initial temperature are all three's
defaults (stated explicitly for SB3 and ours).

Differences that remain (each implementation's own choices, none settable):
- Warm-up actions: ours and SB3 act uniformly at random for the first 1,000 steps; rejax's SAC
  acts with its (untrained) policy during `fill_buffer` (its TD3 samples uniformly, its SAC not).
- Time limits: Pendulum never terminates, every episode ends by truncation at 200 steps. Ours
  and SB3 (`handle_timeout_termination`) bootstrap from the final observation; rejax stores
  gymnax's merged `done` (via `bench_ppo.FiveTupleEnv`, which rejax 0.1.3 needs) and does not.
- Order within a gradient step: ours and SB3 take the critic step, then the actor step against
  the updated critics, then the temperature step, all with the temperature from before the step
  (SB3 steps the temperature first, but its critic and actor losses use the value read before
  that step: the same arithmetic). rejax takes the actor step first, then the critic step (whose
  target's next actions come from the updated actor), then the temperature step.
- Temperature loss: ours and SB3 `-log(alpha) (log pi + target)`; rejax `-alpha (log pi +
  target)` (the same sign of gradient, scaled by alpha).
- Log standard deviation: ours maps the head's output smoothly into [-5, 2] (tanh); rejax clips
  it to [-10, 2], SB3 clamps it to [-20, 2].
- Critic loss: ours sums the two critics' mean squared errors; rejax and SB3 take half of that
  (Adam is nearly invariant to the factor).
- Replay sampling: ours and SB3 draw uniformly with replacement; rejax without replacement
  (`jax.random.choice(replace=False, p=...)` over the whole buffer).
- Initialisation: ours and SB3 uniform in +-1/sqrt(fan_in) (PyTorch's default, weights and
  biases); rejax flax's LeCun normal weights and zero biases.
- Environment: ours and rejax step gymnax's Pendulum-v1, SB3 gymnasium's (the same dynamics,
  reward and time limit).

Timing as `bench_td3.py`: ours and rejax run in this process, one after the other, compile apart
from run (`jit(...).lower(...).compile()`, then the compiled call until `block_until_ready`);
rejax's periodic evaluation is off. Both are one member through `rl_core.map_members`, as `rl
run` trains one seed. SB3 runs in a subprocess of a separate virtual environment (created on
demand with pip: torch's CPU wheel, stable-baselines3, gymnasium) with OMP_NUM_THREADS=1 and
torch.set_num_threads(1); its time is `model.learn` alone. All are compared per 1e4 environment
steps. Ours is timed before and after SB3's run and its row (and every ratio) uses the mean of
the two. Wall time and CPU time (every thread of the process) are both reported.

Final returns: ours, the mean of the training episodes (sampled actions) that ended in the last
5% of updates; ours-greedy and rejax, 64 evaluation episodes of the deterministic policy
(tanh of the mean); SB3, the mean of its training episodes that ended in the last 5% of steps,
and 10 episodes of `evaluate_policy(..., deterministic=True)` after the timed run. A learned
Pendulum agent scores about -200 or better (a random policy about -1,200).

    uv run --group bench python tools/bench_sac.py [--timesteps 20000] [--sb3-timesteps N]
        [--sb3-venv /tmp/sb3venv] [--skip-sb3] [--learn-only]

On Linux, `taskset -c 0 uv run ...` gives every implementation one core (SB3's subprocess
inherits it and runs one thread anyway), as in `bench_td3.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import rl_core
from rl_core import map_members

sys.path.insert(0, str(Path(__file__).parent))  # bench_ppo's FiveTupleEnv, bench_td3's helpers
from bench_td3 import ensure_sb3_venv, greedy_return, measure  # noqa: E402

HP = dict(num_envs=1, batch_size=256, buffer_size=20_000, learning_starts=1_000, lr=3e-4,
          gamma=0.99, tau=0.005, init_alpha=1.0, target_entropy_per_dim=-1.0, hidden=(64, 64))
SB3_EVAL_EPISODES = 10


def our_config(timesteps: int):
    """The `classic_control` preset with `total_timesteps=timesteps`, checked against `HP`."""
    from rl_algos import sac

    static, hparams, _ = sac.PRESETS["classic_control"]
    cfg = sac.SACConfig(**{**static, "total_timesteps": timesteps})
    expected = dict(num_envs=HP["num_envs"], num_steps=1, gradient_steps=1,
                    batch_size=HP["batch_size"], buffer_size=HP["buffer_size"],
                    learning_starts=HP["learning_starts"], hidden_sizes=HP["hidden"],
                    activation="relu")
    actual = {k: getattr(cfg, k) for k in expected}
    if actual != expected or hparams:
        raise SystemExit(f"SAC's classic_control preset {actual} (hparams {hparams}) is no longer "
                         f"this benchmark's setting {expected}: update HP and the docstring")
    return cfg


def our_hparams():
    """`HP` as our SAC's hyperparameter arrays (shared by the training run and `learn_only`)."""
    from rl_algos.common import hparams_as_arrays
    from rl_algos.sac import SACHParams

    return hparams_as_arrays(SACHParams(
        actor_lr=HP["lr"], critic_lr=HP["lr"], alpha_lr=HP["lr"], gamma=HP["gamma"],
        tau=HP["tau"], init_alpha=HP["init_alpha"],
        target_entropy_per_dim=HP["target_entropy_per_dim"]))


def ours(timesteps: int):
    import rl_envs
    from rl_algos import sac

    env = rl_envs.make("gymnax/Pendulum-v1")
    cfg = our_config(timesteps)
    fn = jax.jit(map_members(sac.make_train(env, cfg)))
    args = (jax.random.split(jax.random.PRNGKey(0), 1),
            jax.tree.map(lambda x: x[None], our_hparams()))
    policy = sac.make_policy(env, cfg)

    def greedy(actor, obs):
        agent = rl_core.Agent(sac.SACParams(actor, None, None))
        return policy.act(agent, obs[None], None, True)[0][0]

    def final_return(out) -> dict:
        m = out.metrics
        train = float(rl_core.final_return(np.asarray(m["episode_return_sum"][0]),
                                           np.asarray(m["episode_count"][0])))
        actor = jax.tree.map(lambda x: x[0], out.state.train_state.params.actor)
        return dict(train=train, greedy=greedy_return(greedy, actor))

    return fn, args, final_return


def rejax_sac(timesteps: int):
    import gymnax
    from bench_ppo import FiveTupleEnv
    from rejax import SAC

    env, env_params = gymnax.make("Pendulum-v1")
    algo = SAC.create(
        env=FiveTupleEnv(env), env_params=env_params, total_timesteps=timesteps,
        eval_freq=timesteps, skip_initial_evaluation=True, num_envs=HP["num_envs"],
        num_epochs=1, buffer_size=HP["buffer_size"], fill_buffer=HP["learning_starts"],
        batch_size=HP["batch_size"], learning_rate=HP["lr"], gamma=HP["gamma"],
        polyak=1.0 - HP["tau"], target_update_freq=1, hidden_layer_sizes=HP["hidden"],
        agent_kwargs=dict(activation="relu"),
    )
    # Its fixed choices, checked: initial temperature 1 (log 0) and target entropy -|A|.
    d_act = int(np.prod(env.action_space(env_params).shape))
    log_alpha = algo.init_state(jax.random.PRNGKey(0)).alpha_ts.params["log_alpha"]
    if (float(algo.target_entropy) != HP["target_entropy_per_dim"] * d_act
            or float(log_alpha) != np.log(HP["init_alpha"])):
        raise SystemExit("rejax's SAC no longer starts at temperature 1 with target entropy -|A|")
    algo = algo.replace(eval_callback=lambda a, ts, rng: jnp.zeros(()))
    fn = jax.jit(map_members(lambda k: algo.train(k)[0]))
    args = (jax.random.split(jax.random.PRNGKey(0), 1),)
    actor = algo.actor

    def greedy(params, obs):
        dist = actor.apply(params, obs[None], method="_action_dist")
        return actor.action_loc + jnp.tanh(dist.mean()[0]) * actor.action_scale

    def final_return(ts) -> dict:
        one = jax.tree.map(lambda x: x[0], ts)
        return dict(train=float("nan"), greedy=greedy_return(greedy, one.actor_ts.params))

    return fn, args, final_return


SB3_SCRIPT = r"""
import json, sys, time
import torch
torch.set_num_threads(1)
import gymnasium as gym
import numpy as np
from stable_baselines3 import SAC
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.vec_env import DummyVecEnv

hp, steps, n_eval = json.loads(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
t0 = time.perf_counter()
env = gym.make("Pendulum-v1")
d_act = int(np.prod(env.action_space.shape))
model = SAC("MlpPolicy", env, learning_rate=hp["lr"], buffer_size=hp["buffer_size"],
            learning_starts=hp["learning_starts"], batch_size=hp["batch_size"], tau=hp["tau"],
            gamma=hp["gamma"], train_freq=1, gradient_steps=1, target_update_interval=1,
            ent_coef=f"auto_{hp['init_alpha']}",
            target_entropy=float(hp["target_entropy_per_dim"] * d_act),
            policy_kwargs=dict(net_arch=list(hp["hidden"]), activation_fn=torch.nn.ReLU),
            stats_window_size=max(1, steps // 200), device="cpu", seed=0, verbose=0)
setup = time.perf_counter() - t0
t0, c0 = time.perf_counter(), time.process_time()
model.learn(total_timesteps=steps)
run, cpu = time.perf_counter() - t0, time.process_time() - c0
# Episodes (200 steps each) that ended in the last 5% of steps, as ours' final return.
rets = [ep["r"] for ep in model.ep_info_buffer][-max(1, round(0.05 * steps / 200)):]
eval_env = DummyVecEnv([lambda: gym.make("Pendulum-v1")])
eval_env.seed(1)  # the evaluation's start states fixed, as the greedy returns of the others
greedy, _ = evaluate_policy(model, eval_env, n_eval_episodes=n_eval, deterministic=True)
print("SB3RESULT " + json.dumps(dict(setup=setup, run=run, cpu=cpu, steps=steps,
      train=float(np.mean(rets)) if rets else float("nan"), greedy=float(greedy),
      torch=torch.__version__)))
"""


def sb3(python: Path, timesteps: int) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.run([str(python), "-c", SB3_SCRIPT, json.dumps(HP), str(timesteps),
                           str(SB3_EVAL_EPISODES)], capture_output=True, text=True, env=env)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("SB3RESULT ")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"the stable-baselines3 run failed:\n{proc.stderr[-2000:]}")
    r = json.loads(lines[-1].removeprefix("SB3RESULT "))
    return dict(compile=r["setup"], run=r["run"], cpu=r["cpu"], steps=r["steps"], train=r["train"],
                greedy=r["greedy"], torch=r["torch"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timesteps", type=int, default=20_000,
                    help="environment steps (default: the classic_control preset's 20,000)")
    ap.add_argument("--sb3-timesteps", type=int, default=None,
                    help="steps for SB3 (default: --timesteps, identical step counts)")
    ap.add_argument("--sb3-venv", type=Path, default=Path("/tmp/sb3venv"))
    ap.add_argument("--skip-sb3", action="store_true")
    a = ap.parse_args()
    print(f"jax {jax.__version__}, {jax.devices()[0].device_kind}, Pendulum-v1, 1 env, "
          f"update-to-data 1, hparams {HP}", flush=True)
    res, rerun = {}, {}
    for name, make in (("ours", ours), ("rejax", rejax_sac)):
        res[name], rerun[name] = measure(make, a.timesteps)
        print(name, json.dumps(res[name]), flush=True)
    if not a.skip_sb3:
        res["sb3"] = sb3(ensure_sb3_venv(a.sb3_venv), a.sb3_timesteps or a.timesteps)
        print("sb3", json.dumps(res["sb3"]), flush=True)
        # The machine's speed drifts over SB3's run: time ours again after it and compare SB3
        # with the mean of ours before and after (both printed).
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
    us = res["ours"]
    if "rejax" in res:
        o = res["rejax"]
        print(f"ours / rejax: wall time per 1e4 steps {us['per1e4'] / o['per1e4']:.2f}x, CPU time "
              f"{us['cpu1e4'] / o['cpu1e4']:.2f}x (target <= 0.5x); compile "
              f"{us['compile'] / o['compile']:.2f}x")
    if "sb3" in res:
        o = res["sb3"]
        print(f"sb3 / ours: wall time per 1e4 steps {o['per1e4'] / us['per1e4']:.1f}x, CPU time "
              f"{o['cpu1e4'] / us['cpu1e4']:.1f}x (target >= 10x)")


if __name__ == "__main__":
    main()
