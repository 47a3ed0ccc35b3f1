"""`rl render`: one episode of a trained member, drawn by the environment library's own renderer
(the adapter's `render_episode`): an animated GIF for gymnax (classic control, MinAtar),
jumanji, craftax, xminigrid and JaxMARL's MPE, brax's HTML viewer, pgx's animated SVG, a picture
for the native GridWorld.

The member acts through its algorithm's `make_policy` (greedy unless `stochastic`), exactly as
`rl eval` plays; the states of the episode are collected inside one compiled `lax.scan` of
`max_steps` steps, cut where the episode ended, and handed to the renderer on the host.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from rl_cli.errors import UserError
from rl_cli.evaluate import load_for_play
from rl_cli.play import acting_env
from rl_envs import EnvError, first_line


class RenderResult(NamedTuple):
    path: Path
    member: str
    episode_return: float
    length: int
    finished: bool  # the episode ended within max_steps (else the file shows its first steps)
    seconds: float


def episode_fn(env: Any, policy: Any, max_steps: int, deterministic: bool) -> Any:
    """`(agent, key) -> (states [max_steps + 1], rewards [max_steps], done [max_steps])` of one
    episode of `env` (its own states, before the first step and after each). In a multi-agent
    environment the policy acts for every agent, the reward is the team's and the episode ends
    when every agent is out."""
    import jax
    import jax.numpy as jnp

    from rl_core import initial_policy_state, policy_step

    venv = acting_env(env, 1)
    n = venv.num_envs  # 1, or the agents of a multi-agent environment

    def run(agent: Any, key: jax.Array) -> Any:
        k_reset, key = jax.random.split(key)
        state, ts = venv.reset(k_reset)

        def step(carry, k):
            state, ts, memory = carry  # memory: a recurrent policy's state (None otherwise)
            k_act, k_step = jax.random.split(k)
            action, _, memory = policy_step(policy, agent, memory, ts.observation,
                                            jnp.zeros((n,), jnp.bool_), policy.noise(k_act, (n,)),
                                            deterministic, ts.info.get("action_mask"))
            state, ts = venv.step(state, action, k_step)
            over = jnp.all(ts.terminated | ts.truncated)
            return (state, ts, memory), (state, jnp.sum(ts.reward), over)

        _, (states, rewards, done) = jax.lax.scan(
            step, (state, ts, initial_policy_state(policy, n)), jax.random.split(key, max_steps))
        states = jax.tree.map(lambda s0, s: jnp.concatenate([s0[None], s])[:, 0], state, states)
        return states, rewards, done

    return run


def render(run_dir: str | Path, out: Path | None = None, member: int = 0, seed: int = 0,
           stochastic: bool = False, max_steps: int = 1000, env_id: str | None = None,
           opponent: str | None = None,
           on_phase: Callable[[str], None] | None = None) -> RenderResult:
    """Plays one episode of member `member` and writes the environment's rendering of it to
    `out` (default `RUN_DIR/render-<member><suffix>`; the suffix is the renderer's).
    `on_phase(text)` hears what it is doing (playing, then drawing N frames) for a status
    line."""
    say = on_phase or (lambda text: None)
    import jax

    if max_steps < 1:
        raise UserError(f"--max-steps must be >= 1, got {max_steps}")
    run, _ = load_for_play(run_dir, env_id, opponent)
    if not 0 <= member < len(run.members):
        raise UserError(f"--member {member} is out of range: the run has {len(run.members)} "
                        f"member(s), 0..{len(run.members) - 1}")
    suffix = getattr(run.env, "render_suffix", None)
    if suffix is None:
        raise UserError(f"{run.env_id} has no renderer (rl render draws gymnax, jumanji, brax, "
                        "pgx, craftax, xminigrid, jaxmarl's MPE, SMAX and Overcooked, and native "
                        "environments)")
    out = out or run.run_dir / f"render-{run.members[member]}{suffix}"
    if out.suffix.lower() != suffix:
        raise UserError(f"--out {out}: {run.env_id} renders to a {suffix} file; name it "
                        f"'*{suffix}'")
    t0 = time.perf_counter()
    say(f"playing an episode of {run.members[member]} (at most {max_steps:,} steps)")
    play = jax.jit(episode_fn(run.env, run.policy, max_steps, not stochastic))
    states, rewards, done = play(run.member(member), jax.random.PRNGKey(seed))
    done = np.asarray(done)
    finished = bool(done.any())
    length = int(np.argmax(done)) + 1 if finished else max_steps
    states = jax.device_get(states)
    frames = [jax.tree.map(lambda x, t=t: x[t], states) for t in range(length + 1)]
    say(f"drawing {len(frames):,} frames into {out.name}")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.stem}.tmp{suffix}")
    try:
        try:
            run.env.render_episode(frames, str(tmp))
        except (UserError, EnvError):
            raise
        except Exception as e:  # the renderer's own failure (a user's environment's too)
            raise UserError(f"{run.env_id}'s renderer raised {type(e).__name__}: "
                            f"{first_line(e)}") from None
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)
    return RenderResult(out, run.members[member], float(np.sum(np.asarray(rewards)[:length])),
                        length, finished, time.perf_counter() - t0)
