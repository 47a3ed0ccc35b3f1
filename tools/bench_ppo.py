"""PPO throughput against the PureJaxRL-style single-file PPO and rejax, in one process.

All train CartPole-v1 at PureJaxRL's config (4 envs x 128 steps, 4 epochs x 4 minibatches,
gamma 0.99, lambda 0.95, clip 0.2, entropy 0.01, value 0.5, grad-norm 0.5, lr 2.5e-4, two tanh
layers of 64), for 1 seed and for 16 vmapped seeds (`--seeds`). "purejaxrl" is
`tools/purejaxrl_ppo_repro.py` (flax + distrax + optax + gymnax, written after PureJaxRL's
`ppo.py`), "rejax" is rejax's PPO from the package registry with its periodic evaluation off, and
ours is `make_train`, not through the CLI. Every program maps its seeds with
`rl_core.members.map_members` (vmapped, except that one seed runs unbatched): as `rl run` maps
ours, and as the peers' own code runs one seed (PureJaxRL's `ppo.py` calls `jax.jit(make_train(
config))(rng)`, rejax `jax.jit(algo.train)`) and many (`jax.vmap` over the keys). Compile time
and run time are measured apart (`jit(...).lower(...).compile()`, then the compiled call until
`block_until_ready`; the process CPU time of the call is reported beside its wall time); the
programs run in interleaved repeats and the ratios are medians of the paired per-repeat ratios.
Returns: ours and PureJaxRL-style, the mean return of the training episodes that ended in the
last 5% of updates; rejax, its final policy over 64 evaluation episodes. "ours-fast" is ours with
`PPOConfig(fast_update=True)`, the same update in a faster arrangement (not the default: see
docs/benchmarks.md). The last column counts the HLO operations
executed per update per seed (`executed_ops`), a measure of work that the machine's load does not
blur. Known differences: rejax clips gradients element-wise and keeps a constant learning rate
with two optimisers (actor, critic); we and PureJaxRL clip by global norm and anneal the learning
rate; we also compute the value of every true next observation (truncated episodes bootstrap).

    taskset -c 0 uv run --group bench python tools/bench_ppo.py [--seeds 1,16] [--peers purejaxrl]
"""

from __future__ import annotations

import argparse
import functools
import re
import time

import jax
import jax.numpy as jnp
import numpy as np

from rl_core.members import map_members

HP = dict(num_envs=4, num_steps=128, num_epochs=4, num_minibatches=4, lr=2.5e-4, gamma=0.99,
          gae_lambda=0.95, clip_eps=0.2, ent_coef=0.01, vf_coef=0.5, max_grad_norm=0.5)


def ours_config(timesteps: int, fast: bool = False):
    """Our `PPOConfig` for PureJaxRL's CartPole settings (`HP`), with `fast_update` if `fast`."""
    from rl_algos import ppo

    return ppo.PPOConfig(total_timesteps=timesteps, num_envs=HP["num_envs"],
                         num_steps=HP["num_steps"], num_epochs=HP["num_epochs"],
                         num_minibatches=HP["num_minibatches"], activation="tanh",
                         hidden_sizes=(64, 64), fast_update=fast)


def ours(timesteps: int, n: int, fast: bool = False, batched: bool = False):
    import rl_envs
    from rl_algos import ppo
    from rl_algos.common import hparams_as_arrays

    cfg = ours_config(timesteps, fast)
    hp = hparams_as_arrays(ppo.PPOHParams(**{k: HP[k] for k in ppo.PPOHParams._fields}))
    return seeded(ppo.make_train(rl_envs.make("gymnax/CartPole-v1"), cfg), hp, n, batched)


def seeded(train, hp, n: int, batched: bool = False):
    """One of our `train(key, hparams)` programs over `n` seeds (keys from PRNGKey(0), the same
    `hp` for each) as `rl run` maps its members (`rl_core.members.map_members`: `vmap` over the
    seeds, except that a single seed runs unbatched), or as `jit(vmap(train))` at every `n` if
    `batched`; its arguments; and the mean over seeds of the return of the training episodes that
    ended in the last 5% of updates (`rl_core.final_return`)."""
    from rl_core import final_return as definition

    hps = jax.tree.map(lambda x: jnp.broadcast_to(x, (n,)), hp)
    args = (jax.random.split(jax.random.PRNGKey(0), n), hps)

    def final_return(out):
        m = out.metrics
        return float(np.nanmean(definition(np.asarray(m["episode_return_sum"]),
                                           np.asarray(m["episode_count"]))))

    return jax.jit(jax.vmap(train) if batched else map_members(train)), args, final_return


class FiveTupleEnv:
    """rejax 0.1.3 unpacks gymnax's pre-1.0 `step` 5-tuple `(obs, state, reward, done, info)`;
    gymnax 1.0 returns `(obs, state, reward, terminated, truncated, info)`. This shim merges the two
    flags back into `done` (exactly what rejax expects) and delegates everything else."""

    def __init__(self, env):
        self._env = env

    def step(self, key, state, action, params=None):
        obs, state, reward, term, trunc, info = self._env.step(key, state, action, params)
        return obs, state, reward, jnp.logical_or(term, trunc), info

    def __getattr__(self, name):
        if name.startswith("__") or name == "_env":  # deepcopy/pickle probe dunders first
            raise AttributeError(name)
        return getattr(self._env, name)


def rejax_ppo(timesteps: int, n: int):
    import gymnax
    from rejax import PPO

    env, env_params = gymnax.make("CartPole-v1")
    algo = PPO.create(
        env=FiveTupleEnv(env), env_params=env_params, total_timesteps=timesteps,
        eval_freq=timesteps,
        skip_initial_evaluation=True, num_envs=HP["num_envs"], num_steps=HP["num_steps"],
        num_epochs=HP["num_epochs"], num_minibatches=HP["num_minibatches"],
        learning_rate=HP["lr"], gamma=HP["gamma"], gae_lambda=HP["gae_lambda"],
        clip_eps=HP["clip_eps"], ent_coef=HP["ent_coef"], vf_coef=HP["vf_coef"],
        max_grad_norm=HP["max_grad_norm"],
        agent_kwargs=dict(activation="tanh", hidden_layer_sizes=(64, 64)),
    )
    # Evaluation off: training only, as for ours. The final policy is evaluated afterwards.
    algo = algo.replace(eval_callback=lambda a, ts, rng: jnp.zeros(()))
    fn = jax.jit(map_members(lambda k: algo.train(k)[0]))
    args = (jax.random.split(jax.random.PRNGKey(0), n),)

    def final_return(ts):
        from rejax.evaluate import evaluate

        def ev(t, k):
            return evaluate(algo.make_act(t), k, algo.env, algo.env_params, 64,
                            algo.env_params.max_steps_in_episode)[1].mean()
        keys = jax.random.split(jax.random.PRNGKey(1), n)
        return float(jnp.mean(jax.jit(jax.vmap(ev))(ts, keys)))

    return fn, args, final_return


_NOT_RUN = {"parameter", "constant", "tuple", "get-tuple-element", "bitcast"}


def purejaxrl_ppo(timesteps: int, n: int, batched: bool = False):
    """The PureJaxRL-style single-file PPO (`tools/purejaxrl_ppo_repro.py`: flax + distrax +
    optax, as PureJaxRL's `ppo.py`), its own `make_train(config)` over the seeds' keys (under
    `jit(vmap(...))` even at one seed if `batched`)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import purejaxrl_ppo_repro as pj

    config = dict(LR=HP["lr"], NUM_ENVS=HP["num_envs"], NUM_STEPS=HP["num_steps"],
                  TOTAL_TIMESTEPS=timesteps, UPDATE_EPOCHS=HP["num_epochs"],
                  NUM_MINIBATCHES=HP["num_minibatches"], GAMMA=HP["gamma"],
                  GAE_LAMBDA=HP["gae_lambda"], CLIP_EPS=HP["clip_eps"], ENT_COEF=HP["ent_coef"],
                  VF_COEF=HP["vf_coef"], MAX_GRAD_NORM=HP["max_grad_norm"],
                  SEQ_ORTHOGONAL=True)  # its initialisers' QRs one seed at a time, as ours
    fn = jax.jit((jax.vmap if batched else map_members)(pj.make_train(config)))
    args = (jax.random.split(jax.random.PRNGKey(0), n),)

    def final_return(out):
        from rl_core import final_return as definition

        ret_sum, count = (np.asarray(x) for x in out["metrics"])
        return float(np.nanmean(definition(ret_sum, count)))

    return fn, args, final_return


PEERS = {"purejaxrl": purejaxrl_ppo, "rejax": rejax_ppo}


def executed_ops(hlo_text: str) -> int:
    """HLO instructions one call executes, from the optimised HLO, each `while` body counted its
    known trip count of times: a noise-free measure of the work of a program made of many tiny
    operations (on CPU each costs a fixed overhead, whatever the load of the machine)."""
    comps: dict[str, list[str]] = {}
    cur, entry = None, None
    for line in hlo_text.splitlines():
        m = re.match(r"^(ENTRY )?%?([\w.\-]+) .*\{$", line)
        if m:
            cur = m.group(2)
            comps[cur] = []
            entry = cur if m.group(1) else entry
        elif cur and "=" in line:
            comps[cur].append(line)

    @functools.cache
    def count(name: str) -> int:
        total = 0
        for line in comps.get(name, []):
            m = re.search(r"\s([a-z][a-z0-9\-]*)\(", line.split("=", 1)[1])
            if not m or m.group(1) in _NOT_RUN:
                continue
            op = m.group(1)
            total += 1
            if op == "while":
                body = re.search(r"body=%?([\w.\-]+)", line)
                cond = re.search(r"condition=%?([\w.\-]+)", line)
                trips = re.search(r'"known_trip_count":\{"n":"(\d+)"', line)
                inner = sum(count(m.group(1)) for m in (body, cond) if m)
                total += (int(trips.group(1)) if trips else 1) * inner
            elif op in ("call", "conditional"):  # not fusions or reductions: one op each
                for callee in re.findall(r"(?:to_apply|branch_computations)=\{?%?([\w.\-]+)",
                                         line):
                    total += count(callee)
        return total

    return count(entry) if entry else 0


def compile_timed(make, timesteps: int, n: int):
    fn, args, final_return = make(timesteps, n)
    t0 = time.perf_counter()
    compiled = fn.lower(*args).compile()
    return compiled, args, final_return, time.perf_counter() - t0


def run_timed(compiled, args):
    """Wall seconds and process CPU seconds of one call, until the result is ready."""
    t0, c0 = time.perf_counter(), time.process_time()
    out = jax.block_until_ready(compiled(*args))
    return out, time.perf_counter() - t0, time.process_time() - c0


def interleaved(progs: dict, repeats: int) -> tuple[dict, dict]:
    """Every compiled program of `progs` (name -> `compile_timed`'s tuple) run `repeats` times,
    interleaved so that a change of load on a shared machine hits all alike: the last output and
    the `(wall, cpu)` seconds of every run, per name."""
    runs: dict[str, list] = {name: [] for name in progs}
    outs = {}
    for _ in range(repeats):
        for name, (compiled, args, _, _) in progs.items():
            outs[name], wall, cpu = run_timed(compiled, args)
            runs[name].append((wall, cpu))
    return outs, runs


def medians(compile_s: float, runs: list) -> dict[str, float]:
    """One program's compile time and the medians of its runs' `(wall, cpu)` seconds."""
    return dict(compile=compile_s, run=float(np.median([r[0] for r in runs])),
                cpu=float(np.median([r[1] for r in runs])))


def paired_ratios(n: int, us: str, peer: str, runs: dict, res: dict) -> str:
    """The line comparing `us` with `peer` at `n` seeds: the median of the paired per-repeat
    run-time ratios (and each), the ratio of medians, of CPU time and of compile time."""
    paired = [o[0] / r[0] for o, r in zip(runs[us], runs[peer], strict=True)]
    return (f"{n:>5} {us}/{peer}: run, median of paired ratios {float(np.median(paired)):.3f}x "
            f"(per repeat {', '.join(f'{p:.3f}' for p in paired)}); ratio of medians "
            f"{res[us]['run'] / res[peer]['run']:.3f}x; "
            f"cpu {res[us]['cpu'] / res[peer]['cpu']:.2f}x; "
            f"compile {res[us]['compile'] / res[peer]['compile']:.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timesteps", type=int, default=500_000)
    ap.add_argument("--seeds", default="1,16")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--peers", default="purejaxrl,rejax",
                    help=f"comma-separated, from {sorted(PEERS)}")
    a = ap.parse_args()
    peers = [p for p in a.peers.split(",") if p]
    unknown = sorted(set(peers) - set(PEERS))
    if unknown:
        ap.error(f"unknown peer(s) {', '.join(unknown)}; choose from {', '.join(sorted(PEERS))}")
    print(f"jax {jax.__version__}, {jax.devices()[0].device_kind}, "
          f"CartPole-v1, {a.timesteps:,} steps per seed; run times are medians over "
          f"{a.repeats} interleaved repeats (ours, ours-fast, {', '.join(peers)}, ours, ...)")
    print(f"{'seeds':>5} {'impl':>9} {'compile s':>10} {'run s':>8} {'cpu s':>8} "
          f"{'steps/s':>12} {'return':>7} {'ops/update':>11}")
    mine = {"ours": ours, "ours-fast": functools.partial(ours, fast=True)}
    impls = (*mine.items(), *((p, PEERS[p]) for p in peers))
    for n in [int(s) for s in a.seeds.split(",")]:
        progs = {name: compile_timed(make, a.timesteps, n) for name, make in impls}
        outs, runs = interleaved(progs, a.repeats)
        res = {}
        for name, (compiled, _, final_return, compile_s) in progs.items():
            ops = executed_ops(compiled.as_text()) / n / (a.timesteps // 512)
            res[name] = medians(compile_s, runs[name])
            wall, cpu = res[name]["run"], res[name]["cpu"]
            print(f"{n:>5} {name:>9} {compile_s:>10.2f} {wall:>8.2f} {cpu:>8.2f} "
                  f"{n * a.timesteps / wall:>12,.0f} {final_return(outs[name]):>7.1f} "
                  f"{ops:>11,.0f}", flush=True)
        for us, peer in ((u, p) for u in mine for p in peers):
            print(paired_ratios(n, us, peer, runs, res), flush=True)


if __name__ == "__main__":
    main()
