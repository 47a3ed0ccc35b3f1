"""What the learning tools share (tools/learning_report.py): a short run still plots a line, and
a program's curve survives the figure's JSON (an update without a finished battle
as NaN) so that `--programs` can retrain one side and take the others from it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"
sys.path.insert(0, str(TOOLS))

import learning_report  # noqa: E402


def test_window_keeps_smooth_and_shortens_for_short_runs() -> None:
    assert learning_report.window(183) == learning_report.SMOOTH  # SMAX 2s3z at 3e6 steps
    assert learning_report.window(80) == learning_report.SMOOTH
    assert learning_report.window(79) == 19
    assert learning_report.window(30) == 7  # 4 points, not 1
    assert learning_report.window(2) == 1


PROGRAMS = ["ours", "ours-terminating", "jaxmarl"]


def _record(curve: np.ndarray) -> dict:
    return {"win rate": {"final_mean": 0.5, "curve": curve},
            "team return": {"final_mean": 5.0, "curve": curve * 10}}


def test_curve_round_trips_through_the_json(tmp_path: Path) -> None:
    curve = np.array([[0.0, np.nan, 0.5], [1.0, 0.25, np.nan]])
    key = {"map": "2s3z", "timesteps": 3000, "seeds": 2}
    path = tmp_path / "f.json"
    path.write_text(json.dumps({**key, "ours": learning_report.stored(_record(curve))}))
    kept = learning_report.earlier(path, key, ["ours", "jaxmarl"], PROGRAMS)
    assert list(kept) == ["ours"]  # jaxmarl is not stored: left out, not an error
    np.testing.assert_array_equal(kept["ours"]["win rate"]["curve"], curve)  # NaN kept NaN
    assert kept["ours"]["team return"]["final_mean"] == 5.0


def test_another_budget_is_not_taken(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "f.json"
    key = {"map": "2s3z", "timesteps": 3000, "seeds": 2}
    path.write_text(json.dumps({**key, "ours": learning_report.stored(_record(np.zeros((2, 3))))}))
    assert learning_report.earlier(path, {**key, "seeds": 4}, ["ours"], PROGRAMS) == {}
    assert "ours: not in" in capsys.readouterr().out


@pytest.mark.parametrize("text", ["[1, 2", "[1, 2]", '{"map": "2s3z", "ours": 3}'])
def test_a_json_it_did_not_write_is_one_line(tmp_path: Path, text: str) -> None:
    path = tmp_path / "f.json"
    path.write_text(text)
    with pytest.raises(SystemExit) as e:
        learning_report.earlier(path, {"map": "2s3z"}, ["ours"], PROGRAMS)
    assert str(e.value).startswith(f"error: {path} is not a JSON this tool wrote")
    assert "\n" not in str(e.value)
