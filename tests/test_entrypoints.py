"""Cross-package checks through real processes: the installed `rl` command, the import boundaries
between packages, and the Python API as the README shows it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

RL = shutil.which("rl") or str(Path(sys.executable).with_name("rl"))


def _run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "RL_COMPILE_CACHE": "0"}
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env, **kw)


def test_rl_command_bad_env_is_one_line(tmp_path: Path) -> None:
    p = _run([RL, "run", "--env", "gymnax/CartPol-v1", "--logdir", str(tmp_path)])
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert lines == [lines[0]] and lines[0].startswith("rl: error: unknown environment")
    assert "gymnax/CartPole-v1" in lines[0] and "Traceback" not in p.stderr
    assert not any(tmp_path.iterdir())


def test_rl_command_trains_and_writes_summary(tmp_path: Path) -> None:
    p = _run([RL, "run", "--env", "gymnax/CartPole-v1", "--num-seeds", "2", "--logdir",
              str(tmp_path), "--run-name", "e2e", "--no-progress", "--total-timesteps", "2048",
              "--set", "num_steps=64"])
    assert p.returncode == 0, p.stderr
    summary = json.loads((tmp_path / "e2e" / "summary.json").read_text())
    assert summary["total_timesteps"] == 2048 and len(summary["final_return_per_member"]) == 2
    assert "compile s" in p.stdout and "mean ± 95% CI" in p.stdout


def test_rl_run_caches_the_evaluation_program_too(tmp_path: Path) -> None:
    # The persistent compilation cache keeps every program that took 0.1 s or more to compile:
    # the training program and also the final greedy evaluation's (about 1 s on CartPole, which
    # a threshold of 1 s cached or not depending on the machine's load).
    env = {**os.environ, "RL_COMPILE_CACHE_DIR": str(tmp_path / "cache")}
    argv = [RL, "run", "--env", "gymnax/CartPole-v1", "--total-timesteps", "1024",
            "--no-progress", "--logdir", str(tmp_path / "runs")]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    entries = sorted(e.name for e in (tmp_path / "cache").iterdir())
    assert any(e.startswith("jit_play-") for e in entries), entries


@pytest.mark.parametrize("argv, code", [(["algos"], 0), (["run", "--env", "nope/x"], 2)])
def test_rl_entry_ends_the_process_after_atexit_handlers(argv: list[str], code: int) -> None:
    # `rl` (rl_cli.main:entry) skips the interpreter's teardown, not the atexit handlers, and
    # keeps main's exit code; what it printed is flushed.
    script = ("import atexit, sys; atexit.register(lambda: print('atexit ran', flush=True)); "
              f"sys.argv = ['rl', *{argv!r}]; from rl_cli.main import entry; entry(); "
              "print('not reached')")
    p = _run([sys.executable, "-c", script])
    assert p.returncode == code, p.stderr
    assert p.stdout.rstrip().endswith("atexit ran") and "not reached" not in p.stdout
    assert ("algorithms" in p.stdout) if code == 0 else p.stderr.startswith("rl: error:")


@pytest.mark.parametrize(
    "code,forbidden",
    [
        ("import rl_core", ["equinox", "optax", "gymnax", "rl_envs", "rl_algos", "rl_cli"]),
        ("import rl_envs; rl_envs.make('gymnax/CartPole-v1')",
         ["brax", "jumanji", "pgx", "equinox", "optax", "rl_algos", "rl_cli"]),
        ("import rl_algos", ["gymnax", "rl_envs", "rl_cli", "tensorboardX"]),
    ],
)
def test_import_boundaries(code: str, forbidden: list[str]) -> None:
    check = f"{code}; import sys; print(sorted(m for m in {forbidden!r} if m in sys.modules))"
    p = _run([sys.executable, "-c", check])
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]", f"{code!r} imported {p.stdout.strip()}"


def test_readme_python_api() -> None:
    """The README's snippet, on a small budget: one compiled program trains several seeds."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    import rl_envs
    from rl_algos.common import hparams_as_arrays
    from rl_algos.ppo import PPOConfig, PPOHParams, make_train

    env = rl_envs.make("gymnax/CartPole-v1")
    train = make_train(env, PPOConfig(total_timesteps=4 * 32 * 3, num_steps=32))
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (3,)), hparams_as_arrays(PPOHParams()))
    result = jax.jit(jax.vmap(train))(keys, hp)
    assert result.metrics["loss/total"].shape == (3, 3)
    assert np.all(np.isfinite(np.asarray(result.metrics["loss/total"])))
