"""The jaxmarl backend behind the multi-agent port: the contract (three MPE tasks by default,
every listed id under `-m slow`), padded observations and masked actions for agents of different
sizes, the step limit as `truncated` on every agent at once, and a quiet import."""

from __future__ import annotations

import subprocess
import sys

import jax
import numpy as np
import pytest

import rl_envs
from rl_core import AutoReset, check_multiagent_environment

pytest.importorskip("jaxmarl")

FAST = ["jaxmarl/MPE_simple_spread_v3", "jaxmarl/MPE_simple_speaker_listener_v4",
        "jaxmarl/MPE_simple_reference_v3"]


@pytest.mark.parametrize("env_id", FAST)
def test_check_multiagent_environment(env_id: str) -> None:
    check_multiagent_environment(rl_envs.make(env_id))


@pytest.mark.slow
@pytest.mark.parametrize("env_id", rl_envs.list_envs("jaxmarl"))
def test_check_multiagent_environment_every_task(env_id: str) -> None:
    check_multiagent_environment(rl_envs.make(env_id))


def test_every_listed_task_is_jaxmarls() -> None:
    import jaxmarl

    names = [i.removeprefix("jaxmarl/") for i in rl_envs.list_envs("jaxmarl")]
    assert len(names) == 8 and set(names) <= set(jaxmarl.registered_envs)


def test_agents_of_different_sizes_are_padded_and_masked() -> None:
    """simple_speaker_listener: the speaker sees 3 numbers and has 3 actions, the listener 11
    and 5."""
    env = rl_envs.make("jaxmarl/MPE_simple_speaker_listener_v4")
    assert env.agents == ("speaker_0", "listener_0")
    assert env.obs_sizes == (3, 11) and env.action_counts == (3, 5)
    assert env.observation_space.shape == (11,) and env.action_space.n == 5
    _, ts = env.reset(jax.random.PRNGKey(0))
    np.testing.assert_array_equal(ts.observation[0, 3:], 0.0)
    np.testing.assert_array_equal(ts.info["action_mask"],
                                  [[True, True, True, False, False], [True] * 5])


def test_the_step_limit_truncates_every_agent_and_auto_reset_follows() -> None:
    env = AutoReset(rl_envs.make("jaxmarl/MPE_simple_spread_v3"))

    def body(carry, k):
        s, _ = carry
        k_act, k_step = jax.random.split(k)
        s, ts = env.step(s, jax.random.randint(k_act, (3,), 0, 5), k_step)
        return (s, ts), (ts.terminated, ts.truncated, ts.reward)

    @jax.jit
    def run(key):
        return jax.lax.scan(body, env.reset(key), jax.random.split(key, 60))

    _, (term, trunc, reward) = run(jax.random.PRNGKey(0))
    term, trunc = np.asarray(term), np.asarray(trunc)
    assert not term.any()
    ends = np.flatnonzero(trunc.all(axis=1))
    np.testing.assert_array_equal(ends, [25, 51])  # 26 steps an episode, every agent at once
    assert np.array_equal(trunc.any(axis=1), trunc.all(axis=1))
    assert np.all(np.isfinite(np.asarray(reward))) and reward.shape == (60, 3)


def test_making_an_environment_prints_nothing() -> None:
    code = "import rl_envs; rl_envs.make('jaxmarl/MPE_simple_spread_v3')"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "" and "ubmoduled" not in p.stderr, (p.stdout, p.stderr)
