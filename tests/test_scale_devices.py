"""Several devices in one process, simulated on CPU. The device count is fixed when JAX starts, so
each check runs a script from tests/scale/ in a fresh process with
XLA_FLAGS=--xla_force_host_platform_device_count=4 and asserts on what it writes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rl_cli.stats import mean_ci95

SCRIPTS = Path(__file__).parent / "scale"


def subprocess_env(devices: int, fusion_emitters: bool = False) -> dict[str, str]:
    """The simulated device count, and the test suite's persistent compilation cache. With
    `fusion_emitters`, XLA's CPU fusion emitters as `rl` uses them (the default tier's
    conftest.FAST_COMPILE_FLAGS turns them off to compile faster)."""
    import jax

    flags = [f for f in os.environ.get("XLA_FLAGS", "").split()
             if not (fusion_emitters and f.startswith("--xla_cpu_use_fusion_emitters"))]
    env = {**os.environ, "XLA_FLAGS": " ".join(
               [*flags, f"--xla_force_host_platform_device_count={devices}"]),
           "JAX_PLATFORMS": "cpu"}  # the simulated CPU devices, on a GPU host too
    cache = jax.config.jax_compilation_cache_dir
    if cache:  # the scripts read JAX's variables; `rl` reads its own
        env["JAX_COMPILATION_CACHE_DIR"] = env["RL_COMPILE_CACHE_DIR"] = str(cache)
        env["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0.5"
    return env


def run_with_devices(script: str, *args: str, devices: int = 4,
                     fusion_emitters: bool = False) -> None:
    env = subprocess_env(devices, fusion_emitters)
    p = subprocess.run([sys.executable, str(SCRIPTS / script), *args], capture_output=True,
                       text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stderr[-4000:]


def test_sharded_members_equal_unsharded_member_for_member(tmp_path: Path) -> None:
    """10 PPO members (each with its own learning rate) sharded over 4 devices — padded to 12 —
    give exactly the unsharded run's parameters and metrics, member for member. Compiled with
    the fusion emitters `rl` uses: the older loop emitters of the default tier fuse the sharded
    and the unsharded program differently, and some values then differ in the last bit."""
    out = tmp_path / "r.npz"
    run_with_devices("sharded_vs_unsharded.py", str(out), fusion_emitters=True)
    r = np.load(out)
    assert int(r["num_devices"]) == 4 and int(r["num_padded"]) == 12
    sharded = sorted(k for k in r.files if k.startswith("sharded/"))
    assert len(sharded) > 10
    for k in sharded:
        a, b = r[k], r["plain/" + k.removeprefix("sharded/")]
        assert a.shape[0] == 10, f"{k}: padding was not dropped ({a.shape})"
        np.testing.assert_array_equal(a, b, err_msg=k)
    # Members really differ (a mix-up of members would not go unnoticed).
    p = r["sharded/param0"]
    assert all(not np.array_equal(p[i], p[i + 1]) for i in range(9))


@pytest.mark.learning
def test_data_parallel_learns_cartpole_like_one_device(tmp_path: Path) -> None:
    """One agent's environments split over 4 devices with all-reduced gradients learns CartPole as
    well as the same agent on one device: 4 seeds each, 1e5 steps (random play scores ~22)."""
    out = tmp_path / "dp.json"
    run_with_devices("data_parallel_learning.py", str(out), "100000")
    r = json.loads(out.read_text())
    assert r["num_devices"] == 4
    assert r["data_parallel_steps_per_update"] == r["single_steps_per_update"] == 512
    # The parameters stay identical on every device (same init, averaged gradients).
    assert r["param_spread_across_devices"] == 0.0
    dp_mean, dp_ci = mean_ci95(np.array(r["data_parallel_final_returns"]))
    one_mean, one_ci = mean_ci95(np.array(r["single_final_returns"]))
    assert dp_mean > 150 and one_mean > 150, r  # both learn
    # The same final return within noise: the means differ by less than their CIs combined.
    assert abs(dp_mean - one_mean) < (dp_ci**2 + one_ci**2) ** 0.5, r


RL = shutil.which("rl") or str(Path(sys.executable).with_name("rl"))


# The command line of each algorithm's data-parallel run: 1024 steps per agent.
DATA_PARALLEL_RUNS = {
    "ppo": ["--env", "gymnax/CartPole-v1", "--set", "num_steps=16", "--set", "num_minibatches=2"],
    "alphazero": ["--env", "pgx/tic_tac_toe", "--set", "num_steps=16", "--set", "num_envs=64",
                  "--set", "num_simulations=4", "--set", "eval_envs=4", "--eval-episodes", "2"],
}


# PPO and AlphaZero (its own loop: per-device games and replay) in the default tier; PPO's fast
# update, DPO and LPO (PPO's sharded loop) in the heavy one.
@pytest.mark.parametrize("algo", ["ppo", "alphazero", *(pytest.param(a, marks=pytest.mark.heavy)
                                                       for a in ("ppo-fast", "dpo", "lpo"))])
def test_rl_run_data_parallel_on_four_devices(tmp_path: Path, algo: str) -> None:
    """`rl run --data-parallel` for each algorithm that declares it (PPO, also with its
    `fast_update`, DPO and LPO through PPO's loop, AlphaZero): 2 agents, each over 4 devices;
    one copy of each agent saved, loadable by the evaluation path; and a batch that does not
    split over the devices is refused in one line."""
    env = subprocess_env(4)
    fast = algo.endswith("-fast")
    algo = algo.removesuffix("-fast")
    argv = [RL, "run", "--algo", algo, "--data-parallel", "--num-seeds", "2",
            "--total-timesteps", "1024", "--no-progress",
            *DATA_PARALLEL_RUNS.get(algo, DATA_PARALLEL_RUNS["ppo"]),
            *(["--set", "fast_update=true"] if fast else [])]
    if algo == "lpo":  # LPO trains with an evolved drift: a fresh one stands in for it here
        import jax

        from rl_algos.lpo import init_drift
        from rl_cli.meta_params import save_meta_params

        drift = tmp_path / "drift.npz"
        save_meta_params(drift, "drift", init_drift(jax.random.PRNGKey(0)), 0, 0.0)
        argv += ["--meta-params", str(drift)]
    p = subprocess.run([*argv, "--logdir", str(tmp_path), "--run-name", "dp"],
                       capture_output=True, text=True, timeout=600, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    run = tmp_path / "dp"
    config = json.loads((run / "config.json").read_text())
    assert config["parallelism"] == "one agent per member, data-parallel over 4 device(s)"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["total_timesteps"] == 1024 and len(summary["final_return_per_member"]) == 2

    import jax

    from rl_cli.evaluate import load_agent

    # The saved agents have the single-device layout [members, ...], not [members, D, ...].
    agents = load_agent(run).agents
    leaves = jax.tree.leaves(agents)
    assert leaves and all(x.shape[0] == 2 and np.all(np.isfinite(x)) for x in leaves)

    if algo not in ("ppo", "alphazero") or fast:
        return
    bad = subprocess.run([*argv, "--set", "num_envs=6", "--logdir", str(tmp_path / "bad")],
                         capture_output=True, text=True, timeout=300, env=env)
    assert bad.returncode == 2
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rl: error:") and "num_envs" in lines[0]
    assert not (tmp_path / "bad").exists()


@pytest.mark.heavy
def test_data_parallel_run_resumes_bitwise(tmp_path: Path) -> None:
    """`rl run --data-parallel` over 4 devices interrupted (SIGINT) after a checkpoint, then
    `rl resume`: the same parameters, byte for byte, and the same final returns as the run that
    was never interrupted."""
    import signal
    import time

    env = subprocess_env(4)
    argv = [RL, "run", "--algo", "ppo", "--env", "gymnax/CartPole-v1", "--data-parallel",
            "--num-seeds", "2", "--total-timesteps", "4096", "--set", "num_steps=16",
            "--set", "num_minibatches=2", "--log-every", "8", "--checkpoint-every", "8",
            "--eval-episodes", "2", "--no-progress", "--logdir", str(tmp_path)]
    ref = subprocess.run([*argv, "--run-name", "ref"], capture_output=True, text=True,
                         timeout=600, env=env)
    assert ref.returncode == 0, ref.stderr[-3000:]
    run = tmp_path / "cut"
    proc = subprocess.Popen([*argv, "--run-name", "cut"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 300
    def saved() -> int:  # the newest checkpoint's update count (only the two newest are kept)
        return max((int(p.stem.split("-")[1]) for p in (run / "checkpoints").glob("*.ckpt")),
                   default=0)

    while saved() < 16 and proc.poll() is None:
        assert time.monotonic() < deadline, "no checkpoint at update 16 in 300 s"
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, out + err
    resumed = subprocess.run([RL, "resume", str(run), "--no-progress"], capture_output=True,
                             text=True, timeout=600, env=env)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert (run / "params.eqx").read_bytes() == (tmp_path / "ref" / "params.eqx").read_bytes()
    a, b = (json.loads((d / "summary.json").read_text()) for d in (run, tmp_path / "ref"))
    assert a["final_return_per_member"] == b["final_return_per_member"]
    assert a["resumed_from_update"] >= 16


INIT_MANY = """
import jax, jax.numpy as jnp
import rl_envs
from rl_algos.common import hparams_as_arrays
from rl_algos.ppo import PPOConfig, PPOHParams, make_algorithm
from rl_core import compile_members
algo = make_algorithm(rl_envs.make("gymnax/CartPole-v1"), PPOConfig(total_timesteps=512))
keys = jax.random.split(jax.random.PRNGKey(0), 256)
hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (256,)), hparams_as_arrays(PPOHParams()))
carry = compile_members(algo, keys, hp).init(keys, hp)
jax.block_until_ready(carry)
print("ok", jax.tree.leaves(carry.train_state.params)[0].shape)
"""


def test_initialising_many_members_does_not_freeze() -> None:
    """Batched LAPACK QRs (orthogonal initialisers) of a 256-member vmapped init froze XLA's CPU
    thread pool on jax 0.10.2; compile_members initialises members one after another instead.
    A freeze shows here as a timeout, not as a hung suite."""
    p = subprocess.run([sys.executable, "-c", INIT_MANY], capture_output=True, text=True,
                       timeout=240, env=subprocess_env(1))
    assert p.returncode == 0, p.stderr[-3000:]
    assert "ok (256, 64, 4)" in p.stdout
