"""`rl run --config FILE` and `rl run --from RUN_DIR`, as a user drives them: a preset printed
by `rl algos ALGO --preset NAME` becomes a TOML file, a run from that file and a rerun `--from`
its directory end bitwise equal, and options given on the command line change what the file or
the recorded run says, key by key for `--set`."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from cli_helpers import run_cli


def test_a_config_file_and_a_from_rerun_end_bitwise_equal(tmp_path: Path, capsys) -> None:
    code, preset, err = run_cli(["algos", "ppo", "--preset", "classic_control"], capsys)
    assert code == 0, err
    settings = tomllib.loads(preset)
    assert settings["algo"] == "ppo" and settings["set"]["lr"] == 2.5e-4
    settings["set"].pop("total_timesteps")
    head = 'env = "gymnax/CartPole-v1"\nnum-seeds = 2\ntotal_timesteps = 8192\n'
    config = tmp_path / "run.toml"
    config.write_text(head + "eval-episodes = 2\nno-progress = true\n" + preset.replace(
        "total_timesteps = 500000\n", ""))
    logs = ["--logdir", str(tmp_path)]
    code, out, err = run_cli(["run", "--config", str(config), *logs, "--run-name", "a"], capsys)
    assert code == 0, out + err
    code, out, err = run_cli(["run", "--from", str(tmp_path / "a"), *logs, "--run-name", "b",
                              "--no-progress"], capsys)
    assert code == 0, out + err
    a, b = tmp_path / "a", tmp_path / "b"
    assert (a / "params.eqx").read_bytes() == (b / "params.eqx").read_bytes()
    records = [json.loads((d / "config.json").read_text()) for d in (a, b)]
    assert records[0]["config"] == records[1]["config"] and records[0]["num_seeds"] == 2
    assert records[0]["hparams"] == records[1]["hparams"]
    # The command line wins, key by key: lr changes, the file's other settings stay.
    code, out, err = run_cli(["run", "--config", str(config), "--set", "lr=1e-3",
                              "--num-seeds", "1", *logs, "--run-name", "c"], capsys)
    assert code == 0, out + err
    c = json.loads((tmp_path / "c" / "config.json").read_text())
    assert c["hparams"]["lr"] == 1e-3 and c["num_seeds"] == 1
    assert {k: v for k, v in c["hparams"].items() if k != "lr"} == \
        {k: v for k, v in records[0]["hparams"].items() if k != "lr"}
    assert c["config"] == records[0]["config"]
