"""Playing whole episodes with trained agents, compiled once: every member plays the same
`episodes` episodes (seeded), on copies of the environment stepped together without auto-reset,
greedily or sampling as in training. `rl eval`, `rl render` and the final evaluation of `rl run`
play through here."""

from __future__ import annotations

import time
from typing import Any, NamedTuple

import numpy as np

# Episodes still running after this many steps count as unfinished (reported, never averaged).
# Every registered environment ends its episodes long before (time limits are at most 10^4).
MAX_STEPS = 100_000


def acting_env(env: Any, n: int) -> Any:
    """`n` copies of `env` stepped together (no auto-reset), Box actions clipped into the bounds
    as in training (`ClipAction`); a multi-agent environment's agents batched (`AgentsAsBatch`:
    `n * num_agents` actors) as in training."""
    from rl_core import AgentsAsBatch, Box, ClipAction, VectorEnv

    venv: Any = VectorEnv(env, n)
    if getattr(env, "num_agents", None) is not None:
        venv = AgentsAsBatch(venv)
    return ClipAction(venv) if isinstance(env.action_space, Box) else venv


class Played(NamedTuple):
    returns: np.ndarray  # float [M, N], NaN for an episode unfinished after MAX_STEPS
    lengths: np.ndarray  # int [M, N]
    compile_seconds: float
    run_seconds: float
    won: np.ndarray | None = None  # bool [M, N] where the environment reports wins (SMAX)


def play_episodes(env: Any, policy: Any, agents: Any, episodes: int, seed: int = 0,
                  deterministic: bool = True, compiled: Any = None) -> Played:
    """`episodes` whole episodes of `env` for every member of `agents` (leading `[M]` axis), in
    one compiled program (members vmapped; all play the same environment randomness).
    `compiled`: that program compiled beforehand by `compile_play` with the same arguments
    (for agents shaped like these), used unless the agents turn out not to fit it."""
    if compiled is not None:
        try:
            return compiled(agents)
        except (TypeError, ValueError):  # compiled for other shapes or types: compile here
            pass
    t0 = time.perf_counter()
    play = compile_play(env, policy, agents, episodes, seed, deterministic)
    compile_seconds = time.perf_counter() - t0
    return play(agents)._replace(compile_seconds=compile_seconds)


def compile_play(env: Any, policy: Any, agents_like: Any, episodes: int, seed: int = 0,
                 deterministic: bool = True) -> Any:
    """`agents -> Played`, compiled once for agents shaped like `agents_like` (for evaluations
    repeated during training: every call plays the same `episodes` episodes, from `seed`)."""
    import jax

    play = jax.jit(jax.vmap(play_fn(env, policy, episodes, deterministic), in_axes=(0, None)))
    key = jax.random.PRNGKey(seed)
    compiled = play.lower(agents_like, key).compile()

    def run(agents: Any) -> Played:
        t0 = time.perf_counter()
        returns, lengths, done, won = jax.block_until_ready(compiled(agents, key))
        return Played(np.where(np.asarray(done), np.asarray(returns, np.float64), np.nan),
                      np.asarray(lengths), 0.0, time.perf_counter() - t0,
                      None if won is None else np.asarray(won))

    return run


def play_fn(env: Any, policy: Any, episodes: int, deterministic: bool) -> Any:
    """`(agent, key) -> (returns [N], lengths [N], finished [N])` for one member: `episodes`
    episodes of `env` stepped together until every one has ended (an episode's return and length
    stop counting when it ends), acting with the policy (`rl_core.policy_step`: a policy with
    memory carries its state from step to step of each episode). In a multi-agent environment
    the policy acts for every agent, an episode's return is the team's (the sum of its agents'
    rewards) and it ends when every agent is out. Also `won [N]`: the episode ended on a step
    the environment marks won (`info["won"]`; None where the environment has no wins)."""
    import jax
    import jax.numpy as jnp

    from rl_core import initial_policy_state, policy_step

    venv = acting_env(env, episodes)
    agents = getattr(env, "num_agents", None) or 1
    actors = episodes * agents

    def per_episode(ts: Any) -> tuple[jax.Array, jax.Array, jax.Array]:
        """The step's team reward, whether the episode ended and whether it was won,
        `[episodes]` each."""
        over = jnp.all((ts.terminated | ts.truncated).reshape(episodes, agents), axis=1)
        won = jnp.zeros_like(over) if "won" not in ts.info else (
            over & jnp.any(ts.info["won"].reshape(episodes, agents), axis=1))
        return ts.reward.reshape(episodes, agents).sum(axis=1), over, won

    def play(agent: Any, key: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array, Any]:
        k_reset, key = jax.random.split(key)
        state, ts = venv.reset(k_reset)

        def cond(c):
            return ~jnp.all(c[2]) & (c[5] < MAX_STEPS)

        def body(c):
            state, ts, done, ret, length, t, key, memory, won = c
            key, k_act, k_step = jax.random.split(key, 3)
            # No auto-reset: every episode runs from the first step on, so no state is reset.
            action, _, memory = policy_step(
                policy, agent, memory, ts.observation, jnp.zeros((actors,), jnp.bool_),
                policy.noise(k_act, (actors,)), deterministic, ts.info.get("action_mask"))
            state, ts = venv.step(state, action, k_step)
            reward, over, won_now = per_episode(ts)
            live = ~done
            ret = ret + jnp.where(live, reward, 0.0)
            length = length + live.astype(jnp.int32)
            won = won | (live & won_now)
            done = done | over
            return state, ts, done, ret, length, t + 1, key, memory, won

        zeros = jnp.zeros((episodes,), jnp.float32)
        init = (state, ts, zeros.astype(jnp.bool_), zeros, zeros.astype(jnp.int32),
                jnp.zeros((), jnp.int32), key, initial_policy_state(policy, actors),
                zeros.astype(jnp.bool_))
        _, ts, done, ret, length, _, _, _, won = jax.lax.while_loop(cond, body, init)
        return ret, length, done, won if "won" in ts.info else None

    return play
