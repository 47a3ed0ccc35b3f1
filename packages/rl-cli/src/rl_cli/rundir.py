"""Reading a run directory back: the one check that a path is a directory `rl run` (or `rl
sweep`) wrote and holds the files a command needs, and its recorded `config.json`. `rl eval`,
`rl render`, `rl plot` and `rl resume` all start here, so a wrong path reads the same way in each.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rl_cli.errors import UserError

WROTE = "pass a directory that `rl run` wrote (runs/<algo>-<env>-<time>)"


def read_run_config(path: Path, needs: tuple[str, ...] = (), why: str = WROTE,
                    keys: tuple[str, ...] = ("algo", "env", "config", "seeds")) -> dict[str, Any]:
    """`path/config.json` as a dict, once `path` is a directory holding it and every file in
    `needs` (else a UserError: `'{path}' has no {name}: {why}`) and the record has `keys`."""
    if not path.is_dir():
        raise UserError(f"run directory '{path}' does not exist; {WROTE}")
    for name in ("config.json", *needs):
        if not (path / name).is_file():
            raise UserError(f"'{path}' has no {name}: {why}")
    try:
        record = json.loads((path / "config.json").read_text())
        for key in keys:
            record[key]  # noqa: B018  (presence check)
        return dict(record)
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise UserError(f"{path / 'config.json'} is not a config written by `rl run` "
                        f"(missing or unreadable: {e})") from None
