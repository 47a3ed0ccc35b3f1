"""The port's contract (`rl_core.check_environment`) over every registered environment id, for
whatever backends are registered and installed (`rl_envs.list_envs()`), so a backend added to
`rl_envs.BACKENDS`, or registered by an installed package, is checked here without editing
this file.

The default run checks a representative fast subset per backend (`FAST`, or a backend's first id
when it has no entry); `pytest -m slow tests/test_all_envs_contract.py` checks every id.
"""

from __future__ import annotations

import pytest

import rl_envs
from rl_core import check_environment

ALL_IDS = rl_envs.list_envs()
# A few cheap ids per backend covering its kinds of spaces; gymnax's ids are all checked by
# packages/rl-envs-adapters/tests/test_gymnax_contract_*.py in the default run already.
FAST: dict[str, list[str]] = {
    "gymnax": ["gymnax/CartPole-v1"],
    # The cheapest physics to compile (its first id, ant, takes 24 s on a cold CPU), on the
    # generalized pipeline; test_brax_contract.py checks one on the spring pipeline.
    "brax": ["brax/inverted_pendulum"],
    # Structured observation, Discrete actions with a mask. (MultiDiscrete per-agent masks are
    # covered by packages/rl-envs-adapters/tests/test_jumanji_adapter.py.)
    "jumanji": ["jumanji/Snake-v1"],
    "native": ["native/GridWorld"],
}


def _fast_ids() -> list[str]:
    out = []
    for backend in rl_envs.backends():
        ids = [i for i in ALL_IDS if i.split("/", 1)[0] == backend]
        chosen = [i for i in FAST.get(backend, []) if i in ids] or ids[:1]
        out += chosen
    return out


FAST_IDS = _fast_ids()


def test_every_installed_backend_is_represented() -> None:
    installed = {b for b in rl_envs.backends() if rl_envs.backend_installed(b)}
    assert {i.split("/", 1)[0] for i in FAST_IDS} == installed
    assert set(FAST_IDS) <= set(ALL_IDS) and len(ALL_IDS) == len(set(ALL_IDS))


def _check(env_id: str) -> None:
    env = rl_envs.make(env_id)
    assert env.env_id == env_id
    check_environment(env)


@pytest.mark.parametrize("env_id", FAST_IDS)
def test_contract_fast_subset(env_id: str) -> None:
    _check(env_id)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_contract_every_id(env_id: str) -> None:
    _check(env_id)
