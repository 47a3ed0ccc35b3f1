"""PPO learns jumanji/Snake-v1 (issue 3): `rl run --algo ppo --env jumanji/Snake-v1 --num-seeds 4`
with its default preset 'jumanji_snake' (9,830,400 steps per seed, gamma 0.999) reaches a mean
final return of at least 5x that of a uniformly random legal policy, measured here with the same
evaluation (undiscounted returns of the episodes that end, through the same wrapper stack).
Measured 58.1 = 9.4x (docs/adapters-jumanji.md). About 20 minutes on a quiet 2-core CPU:
`pytest -m slow tests/test_jumanji_snake_learning.py`."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from rl_cli.main import main

TOOL = Path(__file__).resolve().parents[1] / "tools" / "random_policy_return.py"


def _random_policy_return(env_id: str) -> float:
    spec = importlib.util.spec_from_file_location("random_policy_return", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # 16 envs x 40,000 steps: ~10 whole episodes per env (Snake's time limit is 4,000 steps).
    return module.random_policy_return(env_id, 16, 40_000, 0)["mean_return"]


@pytest.mark.slow
def test_ppo_snake_beats_random_legal_policy_fivefold(tmp_path: Path) -> None:
    random_return = _random_policy_return("jumanji/Snake-v1")
    assert random_return > 1.0  # the random legal policy eats a few fruits (6.2 measured)
    main(["run", "--algo", "ppo", "--env", "jumanji/Snake-v1", "--num-seeds", "4",
          "--logdir", str(tmp_path), "--run-name", "r", "--no-progress"])  # exits on failure
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["total_timesteps"] == 9_830_400
    assert summary["final_return_mean"] >= 5 * random_return, (summary, random_return)
