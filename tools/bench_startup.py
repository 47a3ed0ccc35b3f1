"""The README quickstart as a user times it: whole processes, start-up and bookkeeping included.

Times, as subprocesses from launch to exit, N interleaved repeats of

  (a) `rl run --algo ppo --env gymnax/CartPole-v1 --no-progress --logdir <tmp>` with a warm JAX
      persistent compilation cache (a cache directory of its own, warmed by one run first), with
      RL_TIMINGS=1 so that each run also reports its phases;
  (b) the PureJaxRL-style single-file script `tools/purejaxrl_ppo_repro.py --seeds 1
      --timesteps 500000` end to end: the same workload (one agent, 976 updates of 4 envs x 128
      steps = 499,712 steps, the same PPO settings), as that script runs: no compilation cache,
      nothing written;

and prints each pair, the medians, the median of the paired ratios a/b (the headline), each
process's CPU time (user + system, steadier than wall time on a shared machine) and the median
of (a)'s phases. "outside the phases" is (a)'s wall time minus the phases' total: the launcher
(`uv run`) and the process's exit. Both are launched the same way: `uv run` (as the README
does; `--group bench` for (b), whose flax and distrax live in that group) or, with `--no-uv`,
this environment's own `rl` and Python.

    uv run --group bench python tools/bench_startup.py [--repeats 5] [--no-uv]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PHASE = re.compile(r"^rl timings: (.+?) +(-?\d+\.\d+)$", re.M)


def commands(use_uv: bool, logdir: Path) -> tuple[list[str], list[str]]:
    ours = ["run", "--algo", "ppo", "--env", "gymnax/CartPole-v1", "--no-progress",
            "--logdir", str(logdir)]
    ref = [str(ROOT / "tools" / "purejaxrl_ppo_repro.py"), "--seeds", "1",
           "--timesteps", "500000"]
    if use_uv:
        return ["uv", "run", "rl", *ours], ["uv", "run", "--group", "bench", "python", *ref]
    rl = shutil.which("rl", path=str(Path(sys.executable).parent)) or "rl"
    return [rl, *ours], [sys.executable, *ref]


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system of the process and its children) and the
    output (stdout + stderr) of one process; a failure stops the benchmark."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return wall, cpu, p.stdout + p.stderr


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-uv", action="store_true",
                    help="launch this environment's `rl` and Python directly, not `uv run`")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        logdir = Path(tmp) / "runs"
        ours, ref = commands(not a.no_uv, logdir)
        env = {**os.environ, "RL_COMPILE_CACHE_DIR": str(Path(tmp) / "cache"),
               "RL_TIMINGS": "1"}
        env.pop("RL_COMPILE_CACHE", None)
        print(f"(a) {' '.join(ours)}\n(b) {' '.join(ref)}\nload average at start: {load()}",
              flush=True)
        timed(ours, env)  # warms the compilation cache (and the file cache)
        timed(ref, env)  # warms the file cache of its imports
        rows, phases = [], []
        for i in range(a.repeats):
            wa, ca, out = timed(ours, env)
            wb, cb, out_b = timed(ref, env)
            ph = {name: float(s) for name, s in PHASE.findall(out)}
            ph["outside the phases (launcher, exit)"] = wa - ph.get("total", 0.0)
            phases.append(ph)
            rows.append((wa, wb, ca, cb))
            ref_line = next((line for line in out_b.splitlines() if line.startswith("ok:")), "")
            print(f"repeat {i + 1}: (a) {wa:6.2f} s wall {ca:6.2f} s CPU   (b) {wb:6.2f} s wall "
                  f"{cb:6.2f} s CPU   a/b {wa / wb:.3f}   [(b) {ref_line}] load {load()}",
                  flush=True)
    med = [statistics.median(r[k] for r in rows) for k in range(4)]
    ratios = [r[0] / r[1] for r in rows]
    cpu_ratios = [r[2] / r[3] for r in rows]
    print(f"\nmedian of {a.repeats}: (a) {med[0]:.2f} s wall, {med[2]:.2f} s CPU; (b) "
          f"{med[1]:.2f} s wall, {med[3]:.2f} s CPU")
    print(f"paired ratios a/b (wall): {', '.join(f'{r:.3f}' for r in ratios)}; median "
          f"{statistics.median(ratios):.3f}  (CPU: median {statistics.median(cpu_ratios):.3f})")
    print(f"load average at end: {load()}\n\n(a)'s phases, median of {a.repeats} (seconds):")
    names = list(dict.fromkeys(n for ph in phases for n in ph))
    width = max(map(len, names))
    for name in names:
        values = [ph[name] for ph in phases if name in ph]
        print(f"  {name:<{width}} {statistics.median(values):7.3f}")


if __name__ == "__main__":
    main()
