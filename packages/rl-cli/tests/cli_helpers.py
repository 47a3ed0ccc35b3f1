"""What the rl-cli tests share: running the `rl` command in this process."""

from __future__ import annotations

import pytest

from rl_cli.main import main


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """`rl ARGV` in this process: its exit code (0 when `main` returns), stdout and stderr."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
        raise SystemExit(0)
    out = capsys.readouterr()
    return exc.value.code or 0, out.out, out.err
