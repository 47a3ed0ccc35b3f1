"""`rl render`: one episode of a member drawn by each backend's own renderer, checked to be a
valid file of its format (GIF, PNG, SVG, HTML); bad input is one line and writes nothing."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_helpers import run_cli
from PIL import Image


def train(tmp_path: Path, capsys, algo: str, env: str, *sets: str) -> Path:
    """A short `rl run` (the agents need not be good to be drawn, nor evaluated at the end)."""
    code, _, err = run_cli(["--no-compile-cache", "run", "--algo", algo, "--env", env,
                            "--num-seeds", "2", *sets, "--logdir", str(tmp_path),
                            "--run-name", "r", "--no-progress", "--eval-episodes", "0"], capsys)
    assert code == 0, err
    return tmp_path / "r"


CASES = [
    ("ppo", "gymnax/CartPole-v1", ["--total-timesteps", "512"], ".gif"),
    ("ppo", "gymnax/Breakout-MinAtar", ["--total-timesteps", "1024", "--set", "num_envs=8",
                                        "--set", "num_steps=128"], ".gif"),
    ("qlearning", "native/GridWorld", ["--total-timesteps", "2000"], ".png"),
    ("pqn", "pgx/tic_tac_toe", ["--total-timesteps", "4096", "--set", "num_envs=32",
                                "--set", "num_steps=32", "--set", "num_minibatches=4"], ".svg"),
    ("ppo", "jumanji/Snake-v1", ["--total-timesteps", "256", "--set", "num_envs=4",
                                 "--set", "num_steps=64", "--set", "num_minibatches=4"], ".gif"),
    ("ppo", "brax/inverted_pendulum", ["--total-timesteps", "256", "--set", "num_envs=16",
                                       "--set", "num_steps=16", "--set", "num_minibatches=4"],
     ".html"),
]
HEAVY = {"brax/inverted_pendulum"}  # brax's compile: in the heavy tier


@pytest.mark.parametrize("algo, env, sets, suffix", [
    pytest.param(*c, id=c[1], marks=[pytest.mark.heavy] if c[1] in HEAVY else []) for c in CASES])
def test_render_writes_a_valid_file(algo, env, sets, suffix, tmp_path: Path, capsys) -> None:
    run = train(tmp_path, capsys, algo, env, *sets)
    code, out, err = run_cli(["render", str(run), "--member", "1", "--max-steps", "40"], capsys)
    assert code == 0, err
    path = run / f"render-seed_1{suffix}"
    assert f"wrote {path}" in out and path.is_file()
    if suffix in (".gif", ".png"):
        with Image.open(path) as im:
            assert im.format == suffix[1:].upper().replace("GIF", "GIF")
            frames = getattr(im, "n_frames", 1)
        assert frames >= 2 if suffix == ".gif" else frames == 1
    elif suffix == ".svg":
        root = ET.parse(path).getroot()
        assert root.tag.endswith("svg")
    else:
        text = path.read_text().strip()
        assert text.lower().startswith(("<!doctype html", "<html")) and text.endswith("</html>")
        data = re.search(r'system = "([^"]+)"', text)  # the system and episode, encoded
        assert "brax-viewer" in text and data is not None and len(data.group(1)) > 1000
    assert not list(run.glob(".*tmp*"))  # the temporary file was renamed or removed


def test_render_bad_input_is_one_line(tmp_path: Path, capsys) -> None:
    run = train(tmp_path, capsys, "qlearning", "native/GridWorld", "--total-timesteps", "2000")
    for argv, hint in (
        (["--member", "2"], "--member 2 is out of range"),
        (["--out", str(tmp_path / "x.gif")], "renders to a .png file"),
        (["--max-steps", "0"], "--max-steps must be >= 1"),
        (["--opponent", "random"], "--opponent is for two-player games"),
    ):
        code, _, err = run_cli(["render", str(run), *argv], capsys)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and lines[0].startswith("rl: error:"), err
        assert hint in lines[0], lines[0]
    assert not list(run.glob("render-*")) and not (tmp_path / "x.gif").exists()
