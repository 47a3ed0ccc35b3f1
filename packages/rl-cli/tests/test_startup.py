"""The garbage collector's pause through an `rl` process's start-up (rl_cli.startup)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

from rl_cli import startup


def test_resume_does_nothing_unless_paused() -> None:
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    startup.resume_gc()  # main() in-process (tests, scripts) never paused it
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_pause_then_resume_freezes_and_reenables() -> None:
    try:
        startup.pause_gc()
        assert not gc.isenabled()
        startup.pause_gc()  # idempotent
        startup.resume_gc()
        assert gc.isenabled() and gc.get_freeze_count() > 0
        startup.resume_gc()  # idempotent
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        gc.enable()


def test_rl_run_resumes_the_collector_after_compiling(tmp_path) -> None:
    # Through the console script's entry: paused at start, resumed (with the start-up objects
    # frozen) once the training program is compiled, so the run itself is collected as usual.
    script = ("import atexit, gc, sys; atexit.register(lambda: print('gc', gc.isenabled(), "
              "gc.get_freeze_count() > 0, flush=True)); sys.argv = ['rl', *sys.argv[1:]]; "
              "from rl_cli.main import entry; entry()")
    argv = ["run", "--env", "gymnax/CartPole-v1", "--total-timesteps", "1024", "--no-progress",
            "--eval-episodes", "0", "--logdir", str(tmp_path)]
    p = subprocess.run([sys.executable, "-c", script, *argv], capture_output=True, text=True,
                       timeout=300, env={**os.environ, "RL_COMPILE_CACHE": "0"})
    assert p.returncode == 0, p.stderr
    assert p.stdout.rstrip().endswith("gc True True")
