"""`--track wandb` and `--track trackio`, offline, through the installed `rl` command (each tracker
reads its settings from the environment when imported): every member's series and the config
reach the tracker's own store, under TensorBoard's tags."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from rl_cli.errors import UserError
from rl_cli.trackers import check_tracker

RL = shutil.which("rl") or str(Path(sys.executable).with_name("rl"))
RUN = ["run", "--env", "gymnax/CartPole-v1", "--num-seeds", "2", "--total-timesteps", "4096",
       "--no-progress", "--eval-episodes", "0"]
MEMBER_TAGS = {"episode_return/seed_0", "episode_return/seed_1", "episode_return/mean",
               "loss/entropy", "perf/steps_per_second"}


def _rl(argv: list[str], tmp: Path, **env: str) -> subprocess.CompletedProcess:
    p = subprocess.run([RL, *argv, "--logdir", str(tmp)], capture_output=True, text=True,
                       timeout=300, cwd=tmp,
                       env={**os.environ, "RL_COMPILE_CACHE": "0", "WANDB_SILENT": "true",
                            **env})
    assert p.returncode == 0, p.stderr
    return p


@pytest.mark.heavy
def test_trackio_offline_writes_every_member_series_to_its_local_store(tmp_path: Path) -> None:
    _rl([*RUN, "--run-name", "t", "--track", "trackio"], tmp_path,
        TRACKIO_DIR=str(tmp_path / "store"), TRACKIO_PROJECT="lab")
    db = sqlite3.connect(tmp_path / "store" / "lab.db")
    rows = db.execute("select run_name, step, metrics from metrics order by step").fetchall()
    assert {r[0] for r in rows} == {"t"}
    assert [r[1] for r in rows] == list(range(512, 4097, 512))  # one row per logged chunk
    assert MEMBER_TAGS <= set(json.loads(rows[-1][2]))
    tb_record = json.loads((tmp_path / "t" / "metrics.jsonl").read_text().splitlines()[-1])
    assert json.loads(rows[-1][2])["episode_return/seed_1"] == pytest.approx(
        tb_record["episode_return"][1])
    (config,) = db.execute("select config from configs where run_name = 't'").fetchone()
    assert json.loads(config)["env"] == "gymnax/CartPole-v1"


def _wandb_records(path: Path) -> list:
    """The protobuf records of a `.wandb` file (a LevelDB-style log: 32 KiB blocks of
    length-prefixed chunks after a 7-byte file header)."""
    from wandb.proto import wandb_internal_pb2 as pb

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    pos, block, parts, out = 7, 32768, b"", []
    while pos + 7 <= len(data):
        left = block - pos % block
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if left < 7 or (kind == 0 and length == 0):  # a block's padding
            pos += left
            continue
        parts += data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):  # a full record, or the last chunk of one
            record = pb.Record()
            record.ParseFromString(parts)
            out.append(record)
            parts = b""
    return out


@pytest.mark.heavy
def test_wandb_offline_writes_its_run_directory_with_every_member_series(tmp_path: Path) -> None:
    _rl([*RUN, "--run-name", "w", "--track", "wandb"], tmp_path, WANDB_MODE="offline")
    (run,) = (tmp_path / "w" / "wandb").glob("offline-run-*/run-*.wandb")
    keys, steps, config = set(), [], []
    for record in _wandb_records(run):
        kind = record.WhichOneof("record_type")
        if kind == "history":
            # a tag with a slash is stored as its parts
            items = {i.key or "/".join(i.nested_key): json.loads(i.value_json)
                     for i in record.history.item}
            keys |= set(items)
            steps.append(record.history.step.num)
        elif kind == "run":
            config = [i.key for i in record.run.config.update]
            assert record.run.display_name == "w"
    assert MEMBER_TAGS <= keys
    assert steps == list(range(512, 4097, 512))
    assert {"algo", "env", "config", "hparams"} <= set(config)


def test_a_tracker_that_is_not_installed_is_one_line(monkeypatch) -> None:
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(UserError, match=r"--track wandb needs the wandb package.*"
                                        r"pip install 'jaxrlkit-cli\[wandb\]'"):
        check_tracker("wandb")


class _Recorder:
    """A tracker run that records what it is sent."""

    def __init__(self):
        self.rows, self.finished = [], False

    def log(self, row, step):
        self.rows.append((step, dict(row)))

    def finish(self):
        self.finished = True


def test_a_sweep_sends_final_returns_at_its_last_step_and_closes_when_stopped(tmp_path) -> None:
    """A sweep member's final return reaches the tracker at the last logged step (a tracker drops
    a step that goes back), and a sweep stopped before its end closes without final returns."""
    import numpy as np

    from rl_cli.reporting import SweepLogger
    from rl_cli.sweep_points import Member
    from rl_cli.trackers import Tracker

    members = [Member(position=s, point=0, seed=s, name=f"p0_seed{s}") for s in (0, 1)]
    chunk = {"episode_return": np.array([1.0, 2.0]), "episode_length": np.array([3.0, 4.0])}
    for final in (np.array([5.0, 6.0]), None):
        run = _Recorder()
        logger = SweepLogger(tmp_path / str(final is None), members, [{"lr": 1.0}] * 2, 8,
                             tracker=Tracker("test", run))
        logger.log(3, 1.0, chunk)
        logger.close(final)
        assert run.finished and {step for step, _ in run.rows} == {24}
        assert run.rows[0][1]["p0_seed1/episode_return"] == 2.0
        assert ("p0_seed1/hparam/final_return" in run.rows[-1][1]) == (final is not None)


def test_a_tracker_that_cannot_start_is_one_line_and_leaves_no_run(tmp_path: Path) -> None:
    """wandb online without a login refuses to start: one line with the offline hint, exit 2,
    and the run directory made for it is gone (nothing in it to resume)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    p = subprocess.run([RL, *RUN, "--track", "wandb", "--logdir", str(tmp_path / "runs")],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path,
                       stdin=subprocess.DEVNULL,
                       env={**env, "HOME": str(tmp_path), "RL_COMPILE_CACHE": "0"})
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rl: error: --track wandb:"), p.stderr
    assert "WANDB_MODE=offline" in lines[0] and "Traceback" not in p.stderr
    assert list((tmp_path / "runs").iterdir()) == []
