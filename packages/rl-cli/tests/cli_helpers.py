"""What the rl-cli tests share: running the `rl` command in this process, and the environment of
an `rl` process that trains for long."""

from __future__ import annotations

import os

import jax
import pytest

from rl_cli.main import main


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """`rl ARGV` in this process: its exit code (0 when `main` returns), stdout and stderr."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
        raise SystemExit(0)
    out = capsys.readouterr()
    return exc.value.code or 0, out.out, out.err


def rl_process_env(optimised: bool = False) -> dict[str, str]:
    """The environment of an `rl` subprocess: the suite's compilation cache, and with
    `optimised` full XLA optimisation. The default tier compiles with conftest.py's
    `FAST_COMPILE_FLAGS`, which save compile time but slow a run of thousands of updates from a
    program compiled once (at level 0, a TD3 Pendulum run of 1000 updates: 10.1 s instead of
    7.0 s once cached). Programs compiled with different flags round differently: runs compared
    bit for bit must share them."""
    env = {**os.environ, "RL_COMPILE_CACHE_DIR": jax.config.jax_compilation_cache_dir or ""}
    if optimised:
        env["XLA_FLAGS"] = " ".join(f for f in env.get("XLA_FLAGS", "").split()
                                    if not f.startswith(("--xla_backend_optimization_level",
                                                         "--xla_cpu_use_fusion_emitters")))
    return env
