"""The algorithm registry: every algorithm folder, one line each. A folder declares itself in its
`spec.py` (`SPEC`, an `AlgoSpec`: settings, presets, capabilities; see `common/spec.py`); the CLI
reads these declarations and refuses a mismatch before anything compiles.

Adding an algorithm is its folder and one line in `FOLDERS`; `tests/test_algorithm_contract.py`
then checks it on every action-space kind it declares (`rl_core.check_algorithm`) and holds its
imports to rl_core, `rl_algos.common` and the algorithm it `extends`."""

from __future__ import annotations

import difflib
import importlib

from rl_algos.common.config import ConfigError
from rl_algos.common.spec import AlgoSpec

FOLDERS = (
    "ppo",
    "ppo_rnn",
    "dpo",
    "lpo",
    "vpg",
    "pqn",
    "pqn_rnn",
    "dqn",
    "qlearning",
    "td3",
    "sac",
    "a2c",
    "ippo",
    "ippo_rnn",
    "mappo",
    "mappo_rnn",
    "pqn_vdn",
    "alphazero",
)

ALGORITHMS: dict[str, AlgoSpec] = {
    spec.name: spec
    for spec in (importlib.import_module(f"rl_algos.{folder}.spec").SPEC for folder in FOLDERS)
}


def get(name: str) -> AlgoSpec:
    if name not in ALGORITHMS:
        close = difflib.get_close_matches(name.lower(), list(ALGORITHMS), n=3, cutoff=0.4)
        hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ConfigError(f"unknown algorithm '{name}'.{hint} Known: {', '.join(ALGORITHMS)}.")
    return ALGORITHMS[name]


def multi_agent_names() -> tuple[str, ...]:
    """The algorithms that train environments of the multi-agent port."""
    return tuple(name for name, spec in ALGORITHMS.items() if spec.multi_agent)
