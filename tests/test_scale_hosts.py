"""Several hosts, simulated by two processes on localhost (CPU, 2 devices each) joined through
jax.distributed: together they run one sweep whose members are sharded over all 4 devices, only
process 0 writes files, and the results equal, exactly, those of one process with 4 devices."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

RL = shutil.which("rl") or str(Path(sys.executable).with_name("rl"))
# 2 learning rates x 3 seeds = 6 members on 4 devices: padded to 8.
SWEEP = ["sweep", "--env", "gymnax/CartPole-v1", "--grid", "lr=3e-4,1e-3", "--num-seeds", "3",
         "--total-timesteps", "512", "--set", "num_steps=16", "--set", "num_minibatches=2",
         "--log-every", "2", "--run-name", "s", "--no-progress"]


def _env(devices: int) -> dict[str, str]:
    import jax

    env = {**os.environ, "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} "
           f"--xla_force_host_platform_device_count={devices}",
           "RL_COMPILE_CACHE": "0"}
    for k in ("RL_COORDINATOR_ADDRESS", "RL_NUM_PROCESSES", "RL_PROCESS_ID"):
        env.pop(k, None)
    if jax.config.jax_compilation_cache_dir:  # the suite's cache, for faster repeat runs
        env.update(RL_COMPILE_CACHE="1",
                   RL_COMPILE_CACHE_DIR=str(jax.config.jax_compilation_cache_dir))
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _results(run: Path) -> tuple[list[dict], list[dict]]:
    rows = list(csv.DictReader((run / "sweep.csv").open()))
    chunks = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    for c in chunks:  # timings differ between runs; everything else must not
        for k in ("seconds", "steps_per_second"):
            c.pop(k)
    return rows, chunks


@pytest.mark.heavy
def test_two_processes_produce_what_one_process_produces(tmp_path: Path) -> None:
    port = _free_port()
    multi = tmp_path / "multi"
    procs = [
        subprocess.Popen(
            [RL, *SWEEP, "--logdir", str(multi), "--coordinator", f"127.0.0.1:{port}",
             "--num-processes", "2", "--process-id", str(i)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(2))
        for i in range(2)
    ]
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=420))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
    assert "members sharded over 4 devices" in outs[0][0]
    # Only process 0 prints. gloo, the CPU collectives library, announces its connections itself
    # ("[Gloo] Rank 1 is connected to 3 peer ranks. Expected number of connected peer ranks is :
    # 3"), from several threads whose writes can interleave mid-line, even mid-word ("3[Gloo]"):
    # so once gloo's words and numbers are taken out, nothing may be left of process 1's output.
    gloo = set("[Gloo] Rank is connected to peer ranks. Expected number of connected peer ranks "
               "is :".split())
    words = "|".join(re.escape(w) for w in sorted(gloo, key=len, reverse=True))
    leftover = re.sub(rf"{words}|\d+", "", outs[1][0])
    assert leftover.strip() == "", f"process 1 printed: {outs[1][0][-2000:]!r}"
    assert [d.name for d in multi.iterdir()] == ["s"], "only process 0 writes files"
    config = json.loads((multi / "s" / "config.json").read_text())
    assert config["process_count"] == 2 and config["mesh_devices"] == 4

    single = tmp_path / "single"
    p = subprocess.run([RL, *SWEEP, "--logdir", str(single), "--devices", "4"],
                       capture_output=True, text=True, timeout=420, env=_env(4))
    assert p.returncode == 0, p.stderr[-3000:]
    rows_m, chunks_m = _results(multi / "s")
    rows_s, chunks_s = _results(single / "s")
    assert len(rows_m) == 6 and len(chunks_m) == 4
    assert rows_m == rows_s
    assert chunks_m == chunks_s
