"""The port's contract (`rl_core.check_environment`) over every registered environment id, for
whatever backends are registered and installed (`rl_envs.list_envs()`), so a backend added to
`rl_envs.BACKENDS`, or registered by an installed package, is checked here without editing
this file.

The default run checks a representative fast subset per backend (`FAST`, or a backend's first id
when it has no entry; `OWN_TESTS` names the backends whose adapter tests check it instead);
`pytest -m slow tests/test_all_envs_contract.py` checks every id. A multi-agent environment is
checked by `check_multiagent_environment`.
"""

from __future__ import annotations

import pytest

import rl_envs
from rl_core import check_environment, check_multiagent_environment

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
    "xminigrid": ["xminigrid/MiniGrid-Empty-5x5"],  # XLand's first id needs a downloaded ruleset
}
# Backends whose default-run check is in their adapter's own test file, which runs it in the same
# process as the adapter's other tests: Craftax processes its textures (about 40 s) once per
# process on a fresh install, and JaxMARL's tests check the multi-agent contract.
OWN_TESTS: dict[str, str] = {
    "craftax": "packages/rl-envs-adapters/tests/test_craftax_adapter.py",
    "jaxmarl": "packages/rl-envs-adapters/tests/test_jaxmarl_adapter.py",
}


def _fast_ids() -> list[str]:
    out = []
    for backend in rl_envs.backends():
        if backend in OWN_TESTS:
            continue
        ids = [i for i in ALL_IDS if i.split("/", 1)[0] == backend]
        chosen = [i for i in FAST.get(backend, []) if i in ids] or ids[:1]
        out += chosen
    return out


FAST_IDS = _fast_ids()


def test_every_installed_backend_is_represented() -> None:
    from pathlib import Path

    installed = {b for b in rl_envs.backends() if rl_envs.backend_installed(b)}
    assert {i.split("/", 1)[0] for i in FAST_IDS} | set(OWN_TESTS) >= installed
    root = Path(__file__).resolve().parents[1]
    assert all((root / path).is_file() for path in OWN_TESTS.values())
    assert set(FAST_IDS) <= set(ALL_IDS) and len(ALL_IDS) == len(set(ALL_IDS))


def _check(env_id: str) -> None:
    env = rl_envs.make(env_id)
    assert env.env_id == env_id
    if hasattr(env, "num_agents"):
        check_multiagent_environment(env)
    else:
        check_environment(env)


@pytest.mark.parametrize("env_id", FAST_IDS)
def test_contract_fast_subset(env_id: str) -> None:
    _check(env_id)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ALL_IDS)
def test_contract_every_id(env_id: str) -> None:
    _check(env_id)
