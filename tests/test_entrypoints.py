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
