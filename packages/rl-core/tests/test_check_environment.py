"""check_environment passes on good environments and names the broken promise of bad ones."""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_core import Box, EnvironmentContractError, MultiDiscrete, Wrapper, check_environment


@pytest.mark.parametrize(
    "kwargs",
    [
        {"with_mask": True},
        {"terminate_at": 4, "time_limit": 4},  # the limit and the terminal state coincide
    ],
)
def test_good_counter_env_passes(make_counter_env, kwargs) -> None:
    check_environment(make_counter_env(**kwargs), num_steps=16)


class Patched(Wrapper):
    """CounterEnv with its reset/step output rewritten by `on_reset(state, ts)` and
    `on_step(state, ts)`, and optionally other spaces."""

    def __init__(self, env, on_reset=None, on_step=None, obs_space=None, act_space=None):
        super().__init__(env)
        self._on_reset = on_reset or (lambda s, ts: (s, ts))
        self._on_step = on_step or (lambda s, ts: (s, ts))
        self._obs_space, self._act_space = obs_space, act_space

    @property
    def observation_space(self):
        return self._obs_space or self.env.observation_space

    @property
    def action_space(self):
        return self._act_space or self.env.action_space

    def reset(self, key):
        return self._on_reset(*self.env.reset(key))

    def step(self, state, action, key):
        return self._on_step(*self.env.step(state, action, key))


_rng = np.random.default_rng(0)


def _noise() -> jax.Array:
    """A fresh host random number at every execution: an impure environment."""
    return jax.pure_callback(
        lambda: np.float32(_rng.uniform(0.0, 0.1)), jax.ShapeDtypeStruct((), jnp.float32)
    )


def _obs(f: Callable) -> Callable:
    return lambda s, ts: (s, ts._replace(observation=f(ts.observation)))


BROKEN = {
    "int reward": (
        dict(on_step=lambda s, ts: (s, ts._replace(reward=ts.reward.astype(jnp.int32)))),
        "step: reward must be float32",
    ),
    "reward with a batch axis": (
        dict(on_step=lambda s, ts: (s, ts._replace(reward=ts.reward[None]))),
        "step: reward must be float32",
    ),
    "int terminated flag": (
        dict(on_step=lambda s, ts: (s, ts._replace(terminated=ts.terminated.astype(jnp.int32)))),
        "terminated must be bool",
    ),
    "info keys differ between reset and step": (
        dict(on_step=lambda s, ts: (s, ts._replace(info={"extra": jnp.float32(0)}))),
        "TimeStep differs between reset and step",
    ),
    "observation outside the space": (
        dict(on_reset=_obs(lambda o: o - 5.0)),
        "observation outside observation_space bounds",
    ),
    "observation of the wrong dtype": (
        dict(on_reset=_obs(lambda o: o.astype(jnp.int32))),
        "observation dtype",
    ),
    "observation of the wrong shape": (
        dict(on_reset=_obs(lambda o: o[:1])),
        "observation shape",
    ),
    "non-deterministic reset": (
        dict(on_reset=_obs(lambda o: o + _noise())),
        "reset is not deterministic",
    ),
    "non-deterministic step": (
        dict(on_step=_obs(lambda o: o + _noise())),
        "step is not deterministic",
    ),
    "reset reward not zero": (
        dict(on_reset=lambda s, ts: (s, ts._replace(reward=jnp.float32(1.0)))),
        "reset reward must be 0",
    ),
    "reset returns a finished episode": (
        dict(on_reset=lambda s, ts: (s, ts._replace(terminated=jnp.bool_(True)))),
        "reset returned a finished episode",
    ),
    "step changes the state's dtype": (
        dict(on_step=lambda s, ts: (s._replace(t=s.t.astype(jnp.float32)), ts)),
        "step changed the state",
    ),
    "no legal action": (
        dict(on_reset=lambda s, ts: (s, ts._replace(info={"action_mask": jnp.zeros(3, bool)}))),
        "no legal action",
    ),
    "action mask of ints": (
        dict(on_reset=lambda s, ts: (s, ts._replace(info={"action_mask": jnp.ones(3, int)}))),
        "action_mask must be bool",
    ),
    "NaN reward later in the episode": (
        dict(
            on_step=lambda s, ts: (s, ts._replace(reward=jnp.where(s.t >= 2, jnp.nan, ts.reward)))
        ),
        "non-finite reward",
    ),
    "action mask on a MultiDiscrete space": (
        # A MultiDiscrete mask is the per-dimension masks concatenated: [sum(nvec)] = [4] here,
        # but the counter env's mask is [3].
        dict(act_space=MultiDiscrete((2, 2))),
        r"action_mask must be bool \[4\]",
    ),
    "action mask on a Box space": (
        dict(act_space=Box(-1.0, 1.0, (2,))),
        "action_mask is only defined for Discrete and MultiDiscrete",
    ),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_env_raises(make_counter_env, name: str) -> None:
    patch, match = BROKEN[name]
    masked = name.startswith("action mask on a")
    base = make_counter_env(terminate_at=6, with_mask=masked)
    env = Patched(base, **patch)
    with pytest.raises(EnvironmentContractError, match=match):
        check_environment(env, num_steps=8)


def test_unknown_action_space_type(make_counter_env) -> None:
    env = Patched(make_counter_env(), act_space=("not", "a", "space"))
    with pytest.raises(EnvironmentContractError, match="action_space must be"):
        check_environment(env)


def test_missing_method() -> None:
    class NoStep:
        observation_space = Box(0.0, 1.0, (1,))
        action_space = Box(0.0, 1.0, (1,))

        def reset(self, key):
            raise AssertionError("never called")

    with pytest.raises(EnvironmentContractError, match="lacks `step`"):
        check_environment(NoStep())


def test_contract_error_is_an_assertion_error() -> None:
    # So that a failed contract reads as a failed test under pytest.
    assert issubclass(EnvironmentContractError, AssertionError)


class _MultiMaskEnv(Wrapper):
    """The counter env with MultiDiscrete((2, 3)) actions and a per-dimension mask [5]; with
    `empty_dim`, dimension 1 has no legal value in a live state."""

    def __init__(self, env, empty_dim: bool):
        super().__init__(env)
        self._mask = jnp.array([True, True, not empty_dim, False, False])

    @property
    def action_space(self):
        return MultiDiscrete((2, 3))

    def reset(self, key):
        s, ts = self.env.reset(key)
        return s, ts._replace(info={"action_mask": self._mask})

    def step(self, state, action, key):
        s, ts = self.env.step(state, action[0], key)
        return s, ts._replace(info={"action_mask": self._mask})


def test_multidiscrete_mask_per_dimension(make_counter_env) -> None:
    check_environment(_MultiMaskEnv(make_counter_env(), empty_dim=False), num_steps=8)
    with pytest.raises(EnvironmentContractError, match="dimension with no legal value"):
        check_environment(_MultiMaskEnv(make_counter_env(), empty_dim=True), num_steps=8)


def test_structured_observation_parts_are_checked(make_counter_env) -> None:
    env = Patched(make_counter_env(),
                  on_reset=lambda s, ts: (s, ts._replace(observation={"v": ts.observation})),
                  on_step=lambda s, ts: (s, ts._replace(observation={"v": ts.observation})),
                  obs_space={"v": Box(0.0, 0.5, (2,))})
    # The counter's t reaches 1 > 0.5: the part's bounds are checked.
    with pytest.raises(EnvironmentContractError, match="outside observation_space bounds"):
        check_environment(env, num_steps=8)
