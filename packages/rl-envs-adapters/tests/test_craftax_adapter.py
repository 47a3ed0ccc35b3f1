"""The craftax backend: the port's contract on Craftax-Classic (symbolic), the step limit as
`truncated` and death as `terminated` (never both), the achievements in `info`, and a refused
option; the GIF renderer, the full Craftax and the pixel variants under `-m slow`.

Craftax processes its textures (about 40 s) the first time each process imports it on a fresh
install, so the default run builds a Craftax environment in one test only (this file's first
that does; tests/test_all_envs_contract.py leaves Craftax to this file)."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_core import check_environment
from rl_envs import EnvError

pytest.importorskip("craftax")

CLASSIC = "craftax/Craftax-Classic-Symbolic-v1"


def test_craftax_ids_and_families() -> None:
    assert rl_envs.list_envs("craftax") == [
        "craftax/Craftax-Symbolic-v1", "craftax/Craftax-Pixels-v1", CLASSIC,
        "craftax/Craftax-Classic-Pixels-v1"]
    assert rl_envs.family(CLASSIC) == "craftax_classic"
    assert rl_envs.family("craftax/Craftax-Symbolic-v1") == "craftax"


@pytest.mark.heavy
def test_classic_keeps_the_contract_truncates_at_the_limit_and_terminates_on_death() -> None:
    """The port's contract on Craftax-Classic-Symbolic, then random play with a 24-step limit,
    64 episodes: an episode that reaches the limit alive is `truncated` at exactly 24 steps; one
    that ends earlier is `terminated` (the player dead or in lava); never both; achievements only
    grow."""
    env = rl_envs.make(CLASSIC)
    assert env.action_space.n == 17 and env.observation_space.shape == (1345,)
    assert env.max_steps == 10_000 and env.max_achievement_return == 22.0
    check_environment(env)
    _check_ends(rl_envs.make(CLASSIC, max_steps=24))


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ["craftax/Craftax-Symbolic-v1", "craftax/Craftax-Pixels-v1",
                                    "craftax/Craftax-Classic-Pixels-v1"])
def test_check_environment_every_variant(env_id: str) -> None:
    check_environment(rl_envs.make(env_id))


def _check_ends(env) -> None:

    def episode(key):
        state, ts = env.reset(key)

        def step(c, k):
            state, ts, steps, end = c
            k_act, k_step = jax.random.split(k)
            state, nxt = env.step(state, jax.random.randint(k_act, (), 0, 17), k_step)
            live = end == 0
            done = nxt.terminated | nxt.truncated
            end = jnp.where(live & done, jnp.where(nxt.terminated, 1, 2), end)
            grew = jnp.all(nxt.info["achievements"] >= ts.info["achievements"]) | ~live | done
            return (state, nxt, steps + live, end), (nxt.terminated & nxt.truncated, grew)

        (_, _, steps, end), (both, grew) = jax.lax.scan(
            step, (state, ts, 0, 0), jax.random.split(key, 24))
        return steps, end, both, grew

    steps, end, both, grew = (np.asarray(x) for x in jax.jit(jax.vmap(episode))(
        jax.random.split(jax.random.PRNGKey(0), 64)))
    assert not both.any() and grew.all() and np.all(end > 0)
    assert np.all(steps[end == 2] == 24) and np.all(steps[end == 1] < 24)
    assert np.sum(end == 2) > 32  # random play mostly survives 24 steps


@pytest.mark.slow
def test_render_episode_writes_a_gif(tmp_path: Path) -> None:
    from PIL import Image

    env = rl_envs.make(CLASSIC)
    state, _ = env.reset(jax.random.PRNGKey(0))
    states = [state]
    for a in (1, 2, 3):
        state, _ = env.step(state, jnp.int32(a), jax.random.PRNGKey(a))
        states.append(state)
    env.render_episode(states, str(tmp_path / "e.gif"))
    with Image.open(tmp_path / "e.gif") as im:
        assert im.format == "GIF" and im.n_frames == 4 and min(im.size) >= 64


def test_bad_option_is_refused_with_the_fix() -> None:
    with pytest.raises(EnvError, match="max_steps must be a positive integer"):
        rl_envs.make(CLASSIC, max_steps=0)
    with pytest.raises(EnvError, match="reset_ratio must be an integer >= 0"):
        rl_envs.make(CLASSIC, reset_ratio=-1)
