"""Stress test: the 64-seed CartPole PPO program in many fresh processes, none may hang.

Each child is a fresh Python process that builds PPO on gymnax/CartPole-v1, vmaps it over
`--seeds` seeds (`--timesteps` environment steps per seed), compiles and runs it, and prints one
`RESULT {json}` line. Two paths are exercised:

  chunked     `rl_core.compile_members` + `rl_core.run_members` (what the CLI uses): jit(vmap(init))
              then a Python loop over compiled, donated chunks of vmapped updates;
  monolithic  `jax.jit(jax.vmap(ppo.make_train(env, cfg)))(keys, hparams)`: the whole run as one
              program, waited on with `block_until_ready`.

A child that runs past `--timeout` seconds is counted as HUNG. Before it is killed its stacks are
dumped into the log directory: `py-spy dump --native` (if py-spy is on PATH), the child's own
`faulthandler` (all Python threads, on SIGUSR1), and with `--gdb` every native thread's backtrace
(`gdb -batch -ex "thread apply all bt"`). The parent prints one line per process, then
"N passed, M hung", and exits 1 if any process hung (2 if one failed otherwise).

    uv run python tools/stress_many_seeds.py [--path chunked|monolithic|both] [--processes 10]
        [--seeds 64] [--timesteps 100000] [--timeout 300] [--xla-flags "--xla_foo=bar"]
        [--jax-config jax_cpu_enable_async_dispatch=false] [--chunk-len K] [--log-dir DIR]
        [--qr sequential|batched] [--gdb]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PATHS = ("chunked", "monolithic")


# --------------------------------------------------------------------------------------------
# child: one fresh process, one run
# --------------------------------------------------------------------------------------------

def _parse_config_value(v: str):
    low = v.lower()
    if low in ("true", "false"):
        return low == "true"
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v


def _stage(msg: str, t0: float) -> None:
    # Progress markers on stderr, so a hang's log shows how far the child got.
    print(f"[{time.perf_counter() - t0:8.2f}s] {msg}", file=sys.stderr, flush=True)


def _restore_batched_qr() -> None:
    """`--qr batched`: the plain orthogonal initialiser, whose vmapped form is one batched LAPACK
    QR per layer. This is what deadlocked (see docs/stress-many-seeds.md); the package's own
    `orthogonal_weight` runs one unbatched QR per member instead. Kept to reproduce the hang."""
    import jax
    import jax.numpy as jnp

    from rl_algos.common import networks

    def orthogonal_weight(key, shape, scale):
        return jax.nn.initializers.orthogonal(scale)(key, shape, jnp.float32)

    networks.orthogonal_weight = orthogonal_weight


def child(a: argparse.Namespace) -> None:
    import faulthandler

    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the parent asks before killing
    t_start = time.perf_counter()

    import jax

    for item in a.jax_config:
        k, _, v = item.partition("=")
        jax.config.update(k, _parse_config_value(v))
    if a.compile_cache:
        jax.config.update("jax_compilation_cache_dir", a.compile_cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)

    import jax.numpy as jnp
    import numpy as np

    import rl_envs
    from rl_algos import ppo
    from rl_algos.common import hparams_as_arrays
    from rl_core import compile_members, final_return, run_members

    _stage(f"jax {jax.__version__} {jax.devices()} XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}"
           f" path={a.path}", t_start)
    env = rl_envs.make("gymnax/CartPole-v1")
    cfg = ppo.PPOConfig(total_timesteps=a.timesteps)
    n = a.seeds
    keys = jax.random.split(jax.random.PRNGKey(a.key), n)
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (n,)), hparams_as_arrays(ppo.PPOHParams()))

    if a.qr == "batched":
        _restore_batched_qr()

    if a.path == "chunked":
        algo = ppo.make_algorithm(env, cfg)
        compiled = compile_members(algo, keys, hp, chunk_len=a.chunk_len)
        if a.workaround == "map-init":  # members initialised one after another (lax.map)
            t0 = time.perf_counter()
            init_c = jax.jit(lambda k, h: jax.lax.map(lambda kh: algo.init(*kh), (k, h)))
            compiled = compiled._replace(
                init=init_c.lower(keys, hp).compile(),
                compile_seconds=compiled.compile_seconds + time.perf_counter() - t0)
        compile_s = compiled.compile_seconds
        _stage(f"compiled in {compile_s:.2f}s ({compiled.num_chunks} chunks x "
               f"{compiled.chunk_len} updates)", t_start)
        t0 = time.perf_counter()
        out = run_members(compiled, keys, hp,
                          on_chunk=(lambda r: _stage(f"chunk {r.chunk + 1}/{r.num_chunks} done",
                                                     t_start)) if a.verbose else None)
        jax.block_until_ready(out.state)
        run_s = time.perf_counter() - t0
        steps = algo.num_updates * algo.steps_per_update
    else:
        train = ppo.make_train(env, cfg)
        t0 = time.perf_counter()
        fn = jax.jit(jax.vmap(train)).lower(keys, hp).compile()
        compile_s = time.perf_counter() - t0
        _stage(f"compiled in {compile_s:.2f}s", t_start)
        t0 = time.perf_counter()
        out = fn(keys, hp)
        _stage("dispatched; block_until_ready", t_start)
        out = jax.block_until_ready(out)
        run_s = time.perf_counter() - t0
        steps = cfg.num_updates * cfg.batch_size

    m = jax.device_get(out.metrics)
    ret = final_return(np.asarray(m["episode_return_sum"]), np.asarray(m["episode_count"]))
    _stage("done", t_start)
    print("RESULT " + json.dumps(dict(
        compile_s=compile_s, run_s=run_s, sps=n * steps / run_s, ret=float(np.mean(ret)),
        finite=bool(np.all(np.isfinite(ret))), jax=jax.__version__,
    )), flush=True)


# --------------------------------------------------------------------------------------------
# parent: N fresh children per path, timeouts, stack dumps
# --------------------------------------------------------------------------------------------

def _dump_stacks(proc: subprocess.Popen, stem: Path, use_gdb: bool) -> list[str]:
    """Everything we can learn about a stuck child, before it is killed."""
    made = []
    pyspy = shutil.which("py-spy")
    if pyspy:
        p = stem.with_suffix(".pyspy.txt")
        try:
            r = subprocess.run([pyspy, "dump", "--native", "--pid", str(proc.pid)],
                               capture_output=True, text=True, timeout=120)
            p.write_text(r.stdout + r.stderr)
            made.append(str(p))
        except subprocess.TimeoutExpired:
            p.write_text("py-spy dump timed out\n")
    if use_gdb and shutil.which("gdb"):
        p = stem.with_suffix(".gdb.txt")
        try:
            r = subprocess.run(["gdb", "-p", str(proc.pid), "-batch", "-nx",
                                "-ex", "set pagination off", "-ex", "info threads",
                                "-ex", "thread apply all bt"],
                               capture_output=True, text=True, timeout=300)
            p.write_text(r.stdout + r.stderr)
            made.append(str(p))
            # The signature of the known deadlock: pool threads parked in jaxlib's LAPACK
            # ParallelBatchMap, each waiting for batch chunks queued behind the other.
            stuck = sum("ParallelBatchMap" in t for t in r.stdout.split("\nThread ")[1:])
            if stuck:
                made.append(f"{stuck} threads blocked in jax::ParallelBatchMap (LAPACK batch)")
        except subprocess.TimeoutExpired:
            p.write_text("gdb timed out\n")
    # The child's faulthandler writes all Python threads' stacks to its stderr log.
    try:
        proc.send_signal(signal.SIGUSR1)
        time.sleep(2)
    except ProcessLookupError:
        pass
    return made


def _child_cmd(a: argparse.Namespace, path: str) -> list[str]:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--path", path,
           "--seeds", str(a.seeds), "--timesteps", str(a.timesteps), "--key", str(a.key)]
    if a.chunk_len:
        cmd += ["--chunk-len", str(a.chunk_len)]
    if a.compile_cache:
        cmd += ["--compile-cache", a.compile_cache]
    if a.verbose:
        cmd += ["--verbose"]
    for c in a.jax_config:
        cmd += ["--jax-config", c]
    cmd += ["--workaround", a.workaround, "--qr", a.qr]
    return cmd


def run_one(a: argparse.Namespace, path: str, i: int, log_dir: Path) -> dict:
    env = dict(os.environ)
    flags = " ".join(f for f in (env.get("XLA_FLAGS", ""), a.xla_flags) if f)
    if flags:
        env["XLA_FLAGS"] = flags
    for kv in a.env:
        k, _, v = kv.partition("=")
        env[k] = v
    stem = log_dir / f"{path}-{i:02d}"
    out_p, err_p = stem.with_suffix(".out"), stem.with_suffix(".err")
    t0 = time.perf_counter()
    with open(out_p, "w") as out, open(err_p, "w") as err:
        proc = subprocess.Popen(_child_cmd(a, path), stdout=out, stderr=err, env=env,
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=a.timeout)
            status = "ok" if rc == 0 else f"failed (rc {rc})"
            dumps: list[str] = []
        except subprocess.TimeoutExpired:
            status = "HUNG"
            dumps = _dump_stacks(proc, stem, a.gdb)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    wall = time.perf_counter() - t0
    res = dict(path=path, i=i, status=status, wall=wall, dumps=dumps, log=str(err_p))
    for line in out_p.read_text().splitlines():
        if line.startswith("RESULT "):
            res.update(json.loads(line[len("RESULT "):]))
    if status != "ok":  # how far it got: the child's last progress marker, or its last line
        lines = err_p.read_text().splitlines()
        stages = [ln for ln in lines if ln.startswith("[")]
        res["tail"] = "last: " + (stages[-1] if stages else (lines[-1] if lines else ""))
    return res


def _fmt(r: dict) -> str:
    if "run_s" in r:
        return (f"{r['path']:>10} #{r['i']:02d} {r['status']:>4}  compile {r['compile_s']:6.1f}s  "
                f"run {r['run_s']:7.1f}s  {r['sps']:>10,.0f} steps/s  return {r['ret']:6.1f}  "
                f"(wall {r['wall']:.0f}s)")
    dumps = f"; dumps {', '.join(r['dumps'])}" if r["dumps"] else ""
    return (f"{r['path']:>10} #{r['i']:02d} {r['status']:>4}  after {r['wall']:.0f}s; "
            f"{r.get('tail', '')}; log {r['log']}{dumps}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--path", choices=(*PATHS, "both"), default="both")
    ap.add_argument("--processes", type=int, default=10, help="fresh processes per path")
    ap.add_argument("--seeds", type=int, default=64)
    ap.add_argument("--timesteps", type=int, default=100_000, help="environment steps per seed")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds before a child is HUNG")
    ap.add_argument("--xla-flags", default="", help="appended to XLA_FLAGS in every child")
    ap.add_argument("--jax-config", action="append", default=[], metavar="NAME=VALUE",
                    help="jax.config.update(NAME, VALUE) in every child (repeatable)")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="extra environment variable for every child (repeatable)")
    ap.add_argument("--chunk-len", type=int, default=None, help="updates per chunk (chunked)")
    ap.add_argument("--compile-cache", default=None, metavar="DIR",
                    help="use JAX's persistent compilation cache in DIR (as the CLI does)")
    ap.add_argument("--workaround", choices=("none", "map-init"), default="none",
                    help="map-init: lax.map instead of vmap over the members' init (chunked)")
    ap.add_argument("--qr", choices=("sequential", "batched"), default="sequential",
                    help="sequential: the package's orthogonal init (one QR per member); "
                         "batched: the plain initialiser (one batched QR: reproduces the hang)")
    ap.add_argument("--key", type=int, default=0, help="PRNGKey the seeds are split from")
    ap.add_argument("--log-dir", default=None, help="child logs and stack dumps (default: tmp)")
    ap.add_argument("--gdb", action="store_true", help="also gdb-backtrace every thread of a hang")
    ap.add_argument("--verbose", action="store_true", help="children log every chunk")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a)
        return

    log_dir = Path(a.log_dir or tempfile.mkdtemp(prefix="stress_many_seeds-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    paths = PATHS if a.path == "both" else (a.path,)
    if a.workaround == "map-init" and "monolithic" in paths:
        ap.error("--workaround map-init applies to --path chunked only")
    print(f"{a.processes} fresh processes per path x {paths}; {a.seeds} seeds x {a.timesteps:,} "
          f"steps; timeout {a.timeout:.0f}s; XLA_FLAGS+={a.xla_flags!r}; jax config {a.jax_config}"
          f"; env {a.env}; workaround {a.workaround}; qr {a.qr}; logs in {log_dir}", flush=True)
    results = []
    for path in paths:
        for i in range(a.processes):
            r = run_one(a, path, i, log_dir)
            results.append(r)
            print(_fmt(r), flush=True)
    for path in paths:
        ok = [r for r in results if r["path"] == path and r["status"] == "ok"]
        hung = [r for r in results if r["path"] == path and r["status"] == "HUNG"]
        if ok:
            import statistics as st

            med = {k: st.median(r[k] for r in ok) for k in ("compile_s", "run_s", "sps", "ret")}
            print(f"{path:>10}: {len(ok)} ok, {len(hung)} hung; median compile "
                  f"{med['compile_s']:.1f}s, run {med['run_s']:.1f}s, {med['sps']:,.0f} steps/s, "
                  f"return {med['ret']:.1f}")
        else:
            print(f"{path:>10}: {len(ok)} ok, {len(hung)} hung")
    n_ok = sum(r["status"] == "ok" for r in results)
    n_hung = sum(r["status"] == "HUNG" for r in results)
    n_fail = len(results) - n_ok - n_hung
    print(f"{n_ok} passed, {n_hung} hung" + (f", {n_fail} failed" if n_fail else ""), flush=True)
    sys.exit(1 if n_hung else (2 if n_fail else 0))


if __name__ == "__main__":
    main()
