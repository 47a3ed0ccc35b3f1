"""Tabular Q-learning throughput, like for like against the JAX code of Pégoud's article
"Vectorize and Parallelize RL Environments with JAX: Q-learning at the Speed of Light" (2023,
code in github.com/RPegoud/jax_rl, since renamed jym), measured in the same process.

The article's workload: an 8 x 12 grid, start (7, 11), goal (0, 0), ε-greedy with ε = 0.1 and
random tie-breaks, α = 0.1, γ = 0.9, Q initialised to 0, ONE environment per agent, 100,000
steps per agent, for 1 agent and for 30 agents (vmapped). An agent-step is one environment
transition used for one Q-update.

- "article": a re-implementation of its loop (`tabular_rollout` / `parallel_rollout`): a
  `lax.fori_loop` whose carry stores the whole history (observations, rewards, done flags and
  the Q-table after every step, `[T + 1, 8, 12, 4]` per agent), `lax.cond`-based ε-greedy whose
  greedy branch samples uniformly among maximal actions (`random.choice` with p = mask / count),
  its environment step (clip to the grid, reward 1 and done at the goal, `lax.cond` reset to the
  start inside the step), its update (`q[s, a] += α (r + γ max q[s'] − q[s, a])`), and, for 30
  agents, its vmaps (`v_policy`, `v_step`, `v_update` with the agents' axis last in the
  Q-table). Left out: the progress bar of `jax_tqdm` (a host callback every few thousand steps,
  which would only slow it down). Its repository clips positions to `grid_size` inclusive and
  starts at (8, 12), outside its own 8 x 12 Q-table; here the grid is clipped to 0..7 x 0..11
  and starts at (7, 11), the in-bounds reading of the same workload (the same work per step).
- "ours": `rl_algos.qlearning` on `native/GridWorld` with rows=8, cols=12, start=(7, 11),
  goal=(0, 0) (reward −1 per step, so the return is minus the path length; the article's +1 at
  the goal has the same shortest paths), num_envs=1, the same α, γ, ε and Q₀, 100,000 steps.

Both programs are compiled first (compile time reported apart), then timed in interleaved pairs
(article, ours, article, ours, ...) until `block_until_ready`, each run's output released and
freed before the next run starts (`settle`); the table gives median run times,
median rates and the median of the paired ratios. After training, every one of our agents'
greedy policies is followed from every non-goal cell and must reach the goal in exactly the
Manhattan distance.

A second table is a different workload with no counterpart in the article: many environments
per agent (default 5 x 5 grid, random non-goal starts, reward −1), 1 agent x 512 environments and
30 agents x 32 environments, ≈ 3e7 agent-steps per run.

    uv run python tools/bench_qlearning.py [--repeats 7] [--skip-many-env]
    taskset -c 0 uv run python tools/bench_qlearning.py      # pinned to one core
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, random

ROWS, COLS = 8, 12
START, GOAL = (7, 11), (0, 0)
EPSILON, LR, GAMMA = 0.1, 0.1, 0.9
STEPS = 100_000
N_ACTIONS = 4


# ---------------------------------------------------------------------------------------------
# The article's code, re-implemented (functions instead of its classes; the same operations).
# ---------------------------------------------------------------------------------------------

_MOVES = jnp.array([[0, 1], [1, 0], [0, -1], [-1, 0]])  # its movements: right, down, left, up
_INITIAL = jnp.array(START)
_GOAL = jnp.array(GOAL)
_GRID_MAX = jnp.array([ROWS - 1, COLS - 1])


def _article_reset_one(key: jax.Array) -> tuple[jax.Array, jax.Array]:
    # GridWorld._reset: split the key, then `lax.cond(stochastic_reset, ...)` (False here).
    key, sub_key = random.split(key)

    def deterministic() -> tuple[jax.Array, jax.Array]:
        return _INITIAL, sub_key

    def stochastic() -> tuple[jax.Array, jax.Array]:
        state = random.randint(key, (2,), minval=jnp.array([3, 3]),
                               maxval=jnp.array([ROWS, COLS]))
        return state, sub_key

    return lax.cond(False, stochastic, deterministic)


def article_env_reset(key: jax.Array) -> tuple[tuple[jax.Array, jax.Array], jax.Array]:
    env_state = _article_reset_one(key)
    return env_state, env_state[0]


def article_env_step(env_state: tuple[jax.Array, jax.Array], action: jax.Array) -> Any:
    # GridWorld.step: move, clip, reward 1 / done at the goal, reset inside the step on done.
    state, key = env_state
    new_state = jnp.clip(jnp.add(state, _MOVES[action]), jnp.array([0, 0]), _GRID_MAX)
    done = jnp.all(new_state == _GOAL)
    reward = jnp.int32(done)
    env_state = new_state, key
    env_state = lax.cond(done, _article_reset_one, lambda k: env_state, key)
    return env_state, env_state[0], reward, done


def article_policy(key: jax.Array, n_actions: int, state: jax.Array,
                   q_values: jax.Array) -> tuple[jax.Array, jax.Array]:
    # EpsilonGreedy.call: explore test, key split, lax.cond(random action, greedy with ties).
    def random_action(subkey: jax.Array) -> jax.Array:
        return random.choice(subkey, jnp.arange(n_actions))

    def greedy_action(subkey: jax.Array) -> jax.Array:
        q = q_values.at[tuple(state)].get()
        q_max = jnp.max(q, axis=-1)
        q_max_mask = jnp.equal(q, q_max)
        p = jnp.divide(q_max_mask, q_max_mask.sum())
        return jnp.int32(random.choice(subkey, jnp.arange(n_actions), p=p))

    explore = random.uniform(key) < EPSILON
    key, subkey = random.split(key)
    action = lax.cond(explore, random_action, greedy_action, operand=subkey)
    return action, subkey


def article_update(state: jax.Array, action: jax.Array, reward: jax.Array, done: jax.Array,
                   next_state: jax.Array, q_values: jax.Array) -> jax.Array:
    # Q_learning.update (done is not used: it bootstraps from the observation after the step,
    # which at the goal is the start cell of the next episode).
    idx = tuple(jnp.append(state, action))
    target = q_values[idx]
    target += LR * (reward + GAMMA * jnp.max(q_values[tuple(next_state)]) - target)
    return q_values.at[idx].set(target)


def article_single(key: jax.Array, timesteps: int = STEPS) -> tuple:
    """`tabular_rollout`: one agent, the history of everything in the fori_loop's carry."""

    def fori_body(i: int, val: tuple) -> tuple:
        env_states, action_key, all_obs, all_rewards, all_done, all_q_values = val
        states, _ = env_states
        q_values = all_q_values[i]
        actions, action_key = article_policy(action_key, N_ACTIONS, states, q_values)
        env_states, obs, rewards, done = article_env_step(env_states, actions)
        q_values = article_update(states, actions, rewards, done, obs, q_values)
        all_obs = all_obs.at[i].set(obs)
        all_rewards = all_rewards.at[i].set(rewards)
        all_done = all_done.at[i].set(done)
        all_q_values = all_q_values.at[i + 1].set(q_values)
        return env_states, action_key, all_obs, all_rewards, all_done, all_q_values

    all_obs = jnp.zeros([timesteps, 2])
    all_rewards = jnp.zeros([timesteps], dtype=jnp.int32)
    all_done = jnp.zeros([timesteps], dtype=jnp.bool_)
    all_q_values = jnp.zeros([timesteps + 1, ROWS, COLS, N_ACTIONS], dtype=jnp.float32)
    action_key = random.PRNGKey(0)
    env_states, _ = article_env_reset(key)
    val = (env_states, action_key, all_obs, all_rewards, all_done, all_q_values)
    return lax.fori_loop(0, timesteps, fori_body, val)


_v_reset = jax.vmap(article_env_reset, out_axes=((0, 0), 0))
_v_step = jax.vmap(article_env_step, in_axes=((0, 0), 0), out_axes=((0, 0), 0, 0, 0))
_v_policy = jax.vmap(article_policy, in_axes=(0, None, 0, -1))
_v_update = jax.vmap(article_update, in_axes=(0, 0, 0, 0, 0, -1), out_axes=-1)


def article_parallel(keys: jax.Array, timesteps: int = STEPS) -> tuple:
    """`parallel_rollout`: n agents, one environment each, the agents' axis last in Q."""
    n_env = keys.shape[0]

    def fori_body(i: int, val: tuple) -> tuple:
        env_states, action_keys, all_obs, all_rewards, all_done, all_q_values = val
        states, _ = env_states
        q_values = all_q_values[i]
        actions, action_keys = _v_policy(action_keys, N_ACTIONS, states, q_values)
        env_states, obs, rewards, done = _v_step(env_states, actions)
        q_values = _v_update(states, actions, rewards, done, obs, q_values)
        all_obs = all_obs.at[i].set(obs)
        all_rewards = all_rewards.at[i].set(rewards)
        all_done = all_done.at[i].set(done)
        all_q_values = all_q_values.at[i + 1].set(q_values)
        return env_states, action_keys, all_obs, all_rewards, all_done, all_q_values

    all_obs = jnp.zeros([timesteps, n_env, 2])
    all_rewards = jnp.zeros([timesteps, n_env], dtype=jnp.int32)
    all_done = jnp.zeros([timesteps, n_env], dtype=jnp.bool_)
    all_q_values = jnp.zeros([timesteps + 1, ROWS, COLS, N_ACTIONS, n_env], dtype=jnp.float32)
    action_keys = random.split(random.PRNGKey(0), n_env)
    env_states, _ = _v_reset(keys)
    val = (env_states, action_keys, all_obs, all_rewards, all_done, all_q_values)
    env_states, action_keys, all_obs, all_rewards, all_done, all_q_values = lax.fori_loop(
        0, timesteps, fori_body, val)
    return all_obs, all_rewards, all_done, all_q_values


# ---------------------------------------------------------------------------------------------
# Ours.
# ---------------------------------------------------------------------------------------------


def ours(num_agents: int, num_envs: int, total_per_agent: int, article_grid: bool,
         num_steps: int = 1000) -> tuple[Callable, tuple, Any]:
    import rl_envs
    from rl_algos.common import hparams_as_arrays
    from rl_algos.qlearning import QLearningConfig, QLearningHParams, make_train

    if article_grid:
        env = rl_envs.make("native/GridWorld", rows=ROWS, cols=COLS, start=START, goal=GOAL)
        hparams = QLearningHParams(lr=LR, gamma=GAMMA, epsilon=EPSILON, q_init=0.0)
    else:
        env = rl_envs.make("native/GridWorld")
        hparams = QLearningHParams()
    per_update = num_envs * num_steps
    total_per_agent = max(per_update, total_per_agent // per_update * per_update)
    config = QLearningConfig(total_timesteps=total_per_agent, num_envs=num_envs,
                             num_steps=num_steps)
    train = make_train(env, config)
    keys = jax.random.split(jax.random.PRNGKey(0), num_agents)
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (num_agents,)), hparams_as_arrays(hparams))
    return jax.jit(jax.vmap(train)), (keys, hp), env


def compile_timed(fn: Callable, args: tuple) -> tuple[Any, float]:
    t0 = time.perf_counter()
    compiled = fn.lower(*args).compile()
    return compiled, time.perf_counter() - t0


def run_timed(compiled: Any, args: tuple) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = compiled(*args)
    jax.block_until_ready(out)
    return time.perf_counter() - t0, out


def settle() -> None:
    """Lets the last run's released buffers be freed before the next timed run: the article's
    output holds every step's Q-table (4.6 GB for 30 agents), and freeing it while the next
    program ran slowed that program by up to 1.7x (measured on ours, pinned to one core)."""
    gc.collect()
    time.sleep(1.0)


def shortest_path_check(env: Any, q: np.ndarray) -> tuple[int, int, list]:
    """Follow each agent's greedy policy (lowest index among ties) from every non-goal cell;
    count the (agent, cell) pairs that reach the goal in exactly the Manhattan distance."""
    dist = env.shortest_distance()
    ok, total, bad = 0, 0, []
    for agent in range(q.shape[0]):
        for start in range(env.num_cells):
            if start == env.goal:
                continue
            cell, steps = start, 0
            while cell != env.goal and steps <= env.num_cells:
                cell, steps = int(env.next_cell[cell, int(np.argmax(q[agent, cell]))]), steps + 1
            total += 1
            if steps == dist[start]:
                ok += 1
            elif len(bad) < 5:
                bad.append((agent, divmod(start, env.cols), steps, int(dist[start])))
    return ok, total, bad


def article_rows(agents_list: list[int], repeats: int) -> None:
    print(f"\nThe article's workload: {ROWS}x{COLS} grid, start {START}, goal {GOAL}, "
          f"one environment per agent, {STEPS:,} steps per agent, ε {EPSILON}, α {LR}, γ {GAMMA}")
    print(f"{'agents':>6} | {'article run s':>13} | {'ours run s':>10} | "
          f"{'article M/s':>11} | {'ours M/s':>8} | {'paired ratio':>12} | "
          f"{'compile article / ours s':>24} | shortest paths")
    for n in agents_list:
        key = jax.random.PRNGKey(2)
        if n == 1:
            art_fn, art_args = jax.jit(article_single), (key,)
        else:
            art_fn, art_args = jax.jit(article_parallel), (jax.random.split(key, n),)
        our_fn, our_args, env = ours(n, 1, STEPS, article_grid=True)
        art_c, art_compile = compile_timed(art_fn, art_args)
        our_c, our_compile = compile_timed(our_fn, our_args)
        t_art, t_our = [], []
        for _ in range(repeats):
            t, out = run_timed(art_c, art_args)
            t_art.append(t)
            del out
            settle()
            t, res = run_timed(our_c, our_args)
            t_our.append(t)
            settle()
        ratios = np.array(t_art) / np.array(t_our)
        ok, total, bad = shortest_path_check(env, np.asarray(res.state.train_state.params))
        steps = n * STEPS
        print(f"{n:>6} | {np.median(t_art):>13.4f} | {np.median(t_our):>10.4f} | "
              f"{steps / np.median(t_art) / 1e6:>11.3f} | {steps / np.median(t_our) / 1e6:>8.2f} | "
              f"{np.median(ratios):>11.1f}x | {art_compile:>11.2f} / {our_compile:<10.2f} | "
              f"{ok}/{total}" + (f" (first misses: {bad})" if bad else ""))
        print(f"{'':>6}   paired ratios: {', '.join(f'{r:.1f}' for r in ratios)}")


def many_env_rows(repeats: int, steps: float) -> None:
    print("\nA different workload (no counterpart in the article): many environments per agent, "
          "native/GridWorld 5x5, random non-goal starts, reward -1, default hyperparameters")
    print(f"{'agents x envs':>14} | {'agent-steps':>12} | {'median run s':>12} | "
          f"{'median M/s':>10} | {'compile s':>9} | final return")
    for n, e in ((1, 512), (30, 32)):
        fn, args, _ = ours(n, e, int(steps) // n, article_grid=False)
        c, compile_s = compile_timed(fn, args)
        times = []
        for _ in range(repeats):
            t, res = run_timed(c, args)
            times.append(t)
        total = n * (int(steps) // n // (e * 1000) * e * 1000)
        m = res.metrics
        final = float(np.sum(m["episode_return_sum"][:, -1]) / np.sum(m["episode_count"][:, -1]))
        print(f"{f'{n} x {e}':>14} | {total:>12,} | {np.median(times):>12.3f} | "
              f"{total / np.median(times) / 1e6:>10.1f} | {compile_s:>9.2f} | {final:.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--agents", default="1,30", help="agent counts of the article's workload")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--many-env-steps", type=float, default=3e7,
                   help="agent-steps per run of the many-environment rows, all agents together")
    p.add_argument("--skip-many-env", action="store_true")
    args = p.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}, {cores} usable CPU core(s) of "
          f"{os.cpu_count()}, load average {os.getloadavg()[0]:.1f}")
    article_rows([int(x) for x in args.agents.split(",")], args.repeats)
    if not args.skip_many_env:
        many_env_rows(args.repeats, args.many_env_steps)


if __name__ == "__main__":
    main()
