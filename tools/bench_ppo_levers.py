"""Candidate speed levers for PPO on CartPole, measured together against the current PPO and the
PureJaxRL-style peer in one process (the speed target of docs/benchmarks.md, "PPO vs the
PureJaxRL-style peer").

Not the product's PPO: `lever_algorithm` restates PPO's update (`rl_algos.ppo.train`) for the
bench's configuration only (one device, no normalisers, a discrete action without a mask, a tanh
MLP actor-critic without an image torso, a 1-D Box observation, so that the wrapper stack is
`VectorEnv(AutoReset(EpisodeStatistics(env)))`; `lever_algorithm` checks these), with each lever
behind a letter of `--levers`:

- `d`: the SGD's layers through TD3's `dense` (weight gradients from a materialised `g.T`).
- `c`: the rollout steps only the actor; the critic values every observation and true next
  observation of the rollout in one pass after it (values computed in a batch of 1,024).
- `s`: one sort per permutation: random bits with their low `b = ceil(log2 n)` bits replaced by
  the index, instead of jax's two-round stable sort. Ties among the `32 - b` random bits keep
  index order, so it is not exactly uniform (at n = 512 some tie occurs in ≈ 1.5% of draws).
- `t` (only with `c`): the rollout's actor layers use weights transposed once per update,
  `[in, out]`.
- `r`: resets computed before the rollout for every step's reset key, one vmapped call, and
  selected inside the step (the same values as `AutoReset`'s).
- `f`: the SGD's actor and critic run feature-major: activations `[features, B]`, each layer
  `W @ x_t + b`, so that the weight gradient `g @ x_t.T` and `W.T @ g` transpose only the small
  weight, never a batch-sized array; the categorical log-probabilities and entropy are taken
  over the first axis of `[n_actions, B]` logits (a transpose there makes the policy head's
  weight gradient a slow dot). Supersedes `d` in the SGD.
- `u`: jax's `threefry2x32` lowered unrolled on the CPU (jax lowers it there as a rolled
  five-round loop), the same bits without the step's `while` of tiny kernels. It re-registers
  the primitive's CPU lowering in jax's private table (jax's unrolled rule, inlined), process-
  wide, so the programs with `u` are compiled after every other (the peer's included); each is
  compared bit for bit with its set without `u` (added if not asked for), and the tool checks
  that its executable has fewer `while` loops than that set's (that the lowering took).
- `x`: plain SGD in place of global-norm clipping and Adam: not a lever (it does not learn the
  same), a bound on what any change to the optimiser could gain.

The restatement with no letter (`levers:-`, always run) gives the current PPO's parameters bit
for bit, and so does every program printed with `bitwise=True` (each is compared with the
current PPO's final parameters). `d`, `c`, `s` and `f` change the float rounding or the random
stream, so making one the default would move every PPO-family result documented here; `r` does
not; `t`, set against `c` alone, does not at this configuration's shapes, but does in general (a
separate check: `x @ W.T` and the same product with `W.T` materialised differ in the last bits
for one-row dots and 256-wide layers). `c`, `t`, `r`, `s` and `f` together are the product's
`PPOConfig(fast_update=True)`, off by default for that reason (`tools/bench_ppo.py` times it as
`ours-fast`); `f` and `s` here call the product's functions (`actor_critic_feature_major`,
`log_prob_entropy_feature_major`, `one_sort_permutation`). Ratios are medians of paired
per-repeat ratios over interleaved repeats, as in `tools/bench_ppo.py`.

    taskset -c 0 uv run --group bench python tools/bench_ppo_levers.py --seeds 1 --levers cstrf
"""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_ppo  # noqa: E402

LEVERS = "dcstrxfu"


def _layer(x: jax.Array, layer: Any, use_dense: bool) -> jax.Array:
    from rl_algos.td3.networks import dense

    return dense(x, layer.weight, layer.bias) if use_dense else x @ layer.weight.T + layer.bias


def _actor(model: Any, x: jax.Array, use_dense: bool) -> jax.Array:
    """`[B, d_obs] -> [B, n_actions]` logits of `ActorCritic`'s actor."""
    for layer in model.actor.layers:
        x = jnp.tanh(_layer(x, layer, use_dense))
    return _layer(x, model.policy_head, use_dense)


def _critic(model: Any, x: jax.Array, use_dense: bool) -> jax.Array:
    """`[B, d_obs] -> [B]` values of `ActorCritic`'s critic."""
    for layer in model.critic.layers:
        x = jnp.tanh(_layer(x, layer, use_dense))
    return _layer(x, model.value_head, use_dense)[..., 0]


def lever_algorithm(env: Any, config: Any, levers: str) -> Any:
    """PPO's `Algorithm` for the bench's configuration with `levers` (letters of `LEVERS`)."""
    from rl_algos.common.distributions import Categorical, log_prob_entropy_feature_major
    from rl_algos.common.envs import episode_metrics
    from rl_algos.common.networks import actor_critic_feature_major
    from rl_algos.common.policy import actor_critic_setup, agent_fn
    from rl_algos.common.returns import gae
    from rl_algos.common.sgd import clipped_optimizer, sgd_epochs
    from rl_algos.common.shuffle import one_sort_permutation, permutation
    from rl_algos.ppo.losses import ppo_loss
    from rl_core import (
        Algorithm,
        AutoReset,
        EpisodeStatistics,
        RunnerState,
        TrainState,
        Transition,
        VectorEnv,
    )
    from rl_core.wrappers import _select

    # `u` acts on the lowering (`_unroll_threefry_on_cpu`), not on the algorithm.
    use_d, use_c, use_s, use_t, use_r, use_x, use_f, _ = (ch in levers for ch in LEVERS)
    n_env, n_steps = config.num_envs, config.num_steps
    venv, dist, make_model, static, policy = actor_critic_setup(env, config, n_env)
    stack_ok = (type(venv) is VectorEnv and type(venv.env) is AutoReset
                and type(venv.env.env) is EpisodeStatistics)
    if not (stack_ok and isinstance(dist, Categorical) and config.activation == "tanh"
            and not getattr(config, "cnn_part", "")):
        raise ValueError("bench_ppo_levers restates PPO only for a discrete action, a flat Box "
                         "observation, no normalisers and a tanh MLP; use bench_ppo's config")
    inner = venv.env.env  # EpisodeStatistics(env), below AutoReset
    n_up, n_mb, n_ep = config.num_updates, config.num_minibatches, config.num_epochs

    def optimizer(hp: Any) -> Any:
        if use_x:
            return optax.sgd(hp.lr)
        return clipped_optimizer(hp.lr, hp.max_grad_norm,
                                 anneal_updates=n_up if config.anneal_lr else None,
                                 steps_per_update=n_mb * n_ep)

    def init(key: jax.Array, hp: Any) -> Any:
        k_model, k_env, k_run = jax.random.split(key, 3)
        params = eqx.filter(make_model(k_model), eqx.is_array)
        env_state, ts = venv.reset(k_env)
        train_state = TrainState(params, optimizer(hp).init(params), jnp.zeros((), jnp.int32))
        return RunnerState(train_state, env_state, ts, k_run)

    def loss_fn(params: Any, mb: Any, hp: Any) -> Any:
        model = eqx.combine(params, static)
        if use_f:
            logits_t, value = actor_critic_feature_major(model, mb["obs"])
            log_prob, entropy = log_prob_entropy_feature_major(dist, logits_t, None, mb["action"])
            return ppo_loss(log_prob, mb["log_prob"], mb["adv"], entropy, value, mb["value"],
                            mb["target"], hp, clip_value_loss=config.clip_value_loss,
                            normalize_advantages=config.normalize_advantages)
        if use_d:
            out, value = _actor(model, mb["obs"], True), _critic(model, mb["obs"], True)
        else:
            out, value = jax.vmap(model)(mb["obs"])
        p = dist.params(out, None)
        return ppo_loss(dist.log_prob(p, mb["action"]), mb["log_prob"], mb["adv"],
                        dist.entropy(p), value, mb["value"], mb["target"], hp,
                        clip_value_loss=config.clip_value_loss,
                        normalize_advantages=config.normalize_advantages)

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def reset_step(state: Any, action: jax.Array, key: jax.Array, reset: Any) -> Any:
        """`AutoReset.step` of one environment with its reset already computed."""
        state_st, ts = inner.step(state, action, key)
        state_re, obs_re = reset
        done = jnp.logical_or(ts.terminated, ts.truncated)
        info = {**ts.info, "final_observation": ts.observation}
        return _select(done, state_re, state_st), ts._replace(
            observation=jnp.where(done, obs_re, ts.observation), info=info)

    def rollout(params: Any, env_state: Any, ts0: Any, key: jax.Array, noise: jax.Array):
        model = eqx.combine(params, static)
        key, _, k_env = jax.random.split(key, 3)  # as rl_core.rollout splits it
        env_keys = jax.random.split(k_env, n_steps * n_env * 2).reshape(
            n_steps, n_env, 2, *key.shape)
        resets: Any = None
        if use_r:
            states, tss = jax.vmap(jax.vmap(inner.reset))(env_keys[:, :, 1])
            resets = (states, tss.observation)
        weights = [(jax.lax.optimization_barrier(layer.weight.T), layer.bias)
                   for layer in [*model.actor.layers, model.policy_head]] if use_t else []

        def one_step(carry: Any, xs: Any) -> Any:
            env_state, ts = carry
            nz, keys, reset = xs
            if use_c:
                if use_t:
                    x = ts.observation
                    for w, b in weights[:-1]:
                        x = jnp.tanh(x @ w + b)
                    out = x @ weights[-1][0] + weights[-1][1]
                else:
                    out = _actor(model, ts.observation, False)
                p = dist.params(out, None)
                action = dist.sample_with(p, nz)
                extras = {"log_prob": dist.log_prob(p, action)}
            else:
                out, value = jax.vmap(model)(ts.observation)
                p = dist.params(out, None)
                action = dist.sample_with(p, nz)
                extras = {"log_prob": dist.log_prob(p, action), "value": value}
            if use_r:
                env_state, nts = jax.vmap(reset_step)(env_state, action, keys[:, 0], reset)
            else:
                env_state, nts = venv.step(env_state, action, keys)
            info = dict(nts.info)
            next_obs = info.pop("final_observation", nts.observation)
            tr = Transition(ts.observation, action, nts.reward, nts.terminated, nts.truncated,
                            next_obs, extras, info)
            return (env_state, nts), tr

        (env_state, ts), traj = jax.lax.scan(one_step, (env_state, ts0),
                                             (noise, env_keys, resets))
        return env_state, ts, key, traj

    def update(carry: Any, hp: Any) -> Any:
        ts_ = carry.train_state
        key, k_noise = jax.random.split(carry.key)
        noise = policy.noise(k_noise, (n_steps, n_env))
        env_state, timestep, key, traj = rollout(ts_.params, carry.env_state, carry.timestep,
                                                 key, noise)
        model = eqx.combine(ts_.params, static)
        if use_c:
            m = n_steps * n_env
            obs = jnp.concatenate([traj.observation.reshape(m, -1),
                                   traj.next_observation.reshape(m, -1)])
            v = _critic(model, obs, False)
            values, next_values = v[:m].reshape(n_steps, n_env), v[m:].reshape(n_steps, n_env)
            traj = traj._replace(extras={**traj.extras, "value": values})
        else:
            next_values = jax.vmap(jax.vmap(model.value))(traj.next_observation)
        adv, targets = gae(traj.reward, traj.extras["value"], next_values, traj.terminated,
                           traj.truncated, hp.gamma, hp.gae_lambda)
        batch = {"obs": traj.observation, "action": traj.action, "adv": adv, "target": targets,
                 **traj.extras}
        batch = jax.tree.map(lambda x: x.reshape(config.batch_size, *x.shape[2:]), batch)
        key, k_perm = jax.random.split(key)
        params, opt_state, metrics = sgd_epochs(
            partial(grad_fn, hp=hp), optimizer(hp), ts_.params, ts_.opt_state, batch, k_perm,
            n_ep, n_mb, permute=one_sort_permutation if use_s else permutation)
        metrics.update(episode_metrics(traj.info, traj.terminated, traj.truncated))
        new_ts = TrainState(params, opt_state, ts_.step + 1)
        return RunnerState(new_ts, env_state, timestep, key, carry.extras), metrics

    return Algorithm(init, update, n_up, config.batch_size, agent_fn(venv), policy)


def levers_program(levers: str):
    """`(timesteps, n) -> (jit(vmap(train)), args, final_return)`, as `bench_ppo.ours`."""

    def make(timesteps: int, n: int):
        import rl_envs
        from rl_core import make_train

        _, args, final_return = bench_ppo.ours(timesteps, n)  # the same keys and hparams
        algo = lever_algorithm(rl_envs.make("gymnax/CartPole-v1"),
                               bench_ppo.ours_config(timesteps), levers)
        return jax.jit(jax.vmap(make_train(algo))), args, final_return

    return make


def _unroll_threefry_on_cpu() -> None:
    """Lever `u`: from now on, in this process, `threefry2x32` lowers on the CPU with jax's
    unrolled rule (the one it uses on other platforms) instead of its rolled loop."""
    from jax._src.interpreters import mlir
    from jax._src.random import threefry2x32 as threefry

    mlir.register_lowering(threefry.threefry2x32_p, threefry._threefry2x32_lowering_rule,
                           platform="cpu")


def _same(ref_leaves: list, out: Any) -> bool:
    """Whether `out`'s final parameters equal `ref_leaves` bit for bit."""
    return all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in
               zip(ref_leaves, jax.tree.leaves(out.state.train_state.params), strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--timesteps", type=int, default=500_000)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--levers", default="cstrf",
                    help=f"comma-separated sets of letters from '{LEVERS}' ('-' for none), "
                         "each a program, e.g. 'd,dcs,dcst'")
    a = ap.parse_args()
    for flag in ("timesteps", "seeds", "repeats"):
        if getattr(a, flag) < 1:
            ap.error(f"--{flag} must be at least 1, got {getattr(a, flag)}")
    # Each set once, letters in LEVERS order; the restatement with no lever always runs.
    sets = list(dict.fromkeys(["-", *(
        "".join(ch for ch in LEVERS if ch in s) or "-" for s in a.levers.split(",") if s)]))
    bad = [s for s in a.levers.split(",") if set(s) - set(LEVERS + "-")]
    if bad:
        ap.error(f"unknown lever letter in {', '.join(bad)}; letters: {LEVERS} ('-' for none)")
    both = [s for s in sets if "d" in s and "f" in s]
    if both:
        ap.error(f"levers d and f both replace the SGD's layers (f wins, d would do nothing): "
                 f"{', '.join(both)}; keep one")
    no_c = [s for s in sets if "t" in s and "c" not in s]
    if no_c:
        ap.error(f"lever t only acts with c (the rollout's actor-only pass): {', '.join(no_c)}; "
                 "add c")
    base = {s: s.replace("u", "") or "-" for s in sets if "u" in s}  # each u set's set without u
    sets = list(dict.fromkeys([*(s for s in sets if "u" not in s), *base.values(), *base]))
    makers = {"current": bench_ppo.ours,
              **{f"levers:{s}": levers_program(s.replace("u", "").strip("-")) for s in sets},
              "purejaxrl": bench_ppo.purejaxrl_ppo}

    def unrolled(name: str) -> bool:
        return name.startswith("levers:") and "u" in name.removeprefix("levers:")

    makers = {k: makers[k] for k in sorted(makers, key=unrolled)}  # u programs last
    progs: dict[str, Any] = {}
    for name, make in makers.items():
        if unrolled(name) and not any(unrolled(p) for p in progs):
            _unroll_threefry_on_cpu()
        compiled, args, final_return, compile_s = bench_ppo.compile_timed(make, a.timesteps,
                                                                          a.seeds)
        progs[name] = (compiled, args, final_return)
        print(f"{name}: compiled in {compile_s:.2f} s", flush=True)
    for s, b in base.items():  # the unrolled lowering took: fewer `while` loops than without it
        loops = [progs[f"levers:{x}"][0].as_text().count(" while(") for x in (s, b)]
        if loops[0] >= loops[1]:
            raise SystemExit(f"lever u did not change the lowering: {loops[0]} while loops in "
                             f"{s} against {loops[1]} in {b}")
        print(f"levers:{s}: {loops[0]} while loops against {loops[1]} in {b}", flush=True)
    times: dict[str, list[float]] = {name: [] for name in progs}
    outs: dict[str, Any] = {}
    for r in range(a.repeats):  # interleaved, alternating the order
        for name in list(progs) if r % 2 == 0 else list(progs)[::-1]:
            compiled, args, _ = progs[name]
            t0 = time.perf_counter()
            outs[name] = jax.block_until_ready(compiled(*args))
            times[name].append(time.perf_counter() - t0)
    ref = jax.tree.leaves(outs["current"].state.train_state.params)
    print(f"jax {jax.__version__}, CartPole-v1, {a.seeds} seed(s), {a.timesteps:,} steps each, "
          f"{a.repeats} interleaved repeats")
    for name, (_, _, final_return) in progs.items():
        vs_cur = [t / c for t, c in zip(times[name], times["current"], strict=True)]
        vs_peer = [t / p for t, p in zip(times[name], times["purejaxrl"], strict=True)]
        bitwise = "" if name in ("current", "purejaxrl") else " bitwise=" + str(
            _same(ref, outs[name]))
        if name.removeprefix("levers:") in base:
            twin = f"levers:{base[name.removeprefix('levers:')]}"
            bitwise += f" bitwise_vs_{twin.removeprefix('levers:')}=" + str(_same(
                jax.tree.leaves(outs[twin].state.train_state.params), outs[name]))
        print(f"{name:>12}: run {np.median(times[name]):.2f} s, /current "
              f"{np.median(vs_cur):.3f}x, /purejaxrl {np.median(vs_peer):.3f}x (per repeat "
              f"{', '.join(f'{x:.3f}' for x in vs_peer)}), return "
              f"{final_return(outs[name]):.1f}{bitwise}", flush=True)


if __name__ == "__main__":
    main()
