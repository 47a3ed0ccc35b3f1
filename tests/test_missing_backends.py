"""Every backend whose library is missing: ids of that prefix end in one clear error naming the
extra to install (from the library, from `rl run`, and in `rl envs`), and `list_envs()` leaves
them out. The missing library is simulated, so this runs for every registered backend."""

from __future__ import annotations

import importlib.util

import pytest

import rl_envs
import rl_envs._registry as registry
from rl_cli.main import main

WITH_LIBRARY = [p for p, b in rl_envs.BACKENDS.items() if b.library is not None]


def _hide(monkeypatch, library: str) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(registry.importlib.util, "find_spec",
                        lambda name, *a: None if name == library else real(name, *a))


def _first_id(prefix: str) -> str:
    return f"{prefix}/{registry.adapter_module(prefix).ENV_NAMES[0]}"


def _run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
        raise SystemExit(0)
    out = capsys.readouterr()
    return exc.value.code or 0, out.out, out.err


def test_backends_with_a_library_are_registered() -> None:
    assert {"gymnax", "jumanji"} <= set(WITH_LIBRARY)


@pytest.mark.parametrize("prefix", WITH_LIBRARY)
def test_missing_library_names_the_extra(monkeypatch, tmp_path, capsys, prefix: str) -> None:
    library, extra = rl_envs.BACKENDS[prefix].library, rl_envs.BACKENDS[prefix].extra
    assert library is not None and extra is not None
    _hide(monkeypatch, library)
    env_id = _first_id(prefix)
    with pytest.raises(rl_envs.MissingBackendError) as exc:
        rl_envs.make(env_id)
    msg = str(exc.value)
    assert f"jaxrlkit-envs[{extra}]" in msg and f"--extra {extra}" in msg and "\n" not in msg
    assert not any(i.startswith(f"{prefix}/") for i in rl_envs.list_envs())
    assert env_id in rl_envs.list_envs(installed_only=False)

    code, _, err = _run_cli(["run", "--env", env_id, "--logdir", str(tmp_path)], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and f"jaxrlkit-envs[{extra}]" in lines[0], err
    assert "Traceback" not in err and not any(tmp_path.iterdir())

    code, out, _ = _run_cli(["envs", "--backend", prefix], capsys)
    assert code == 0 and "not installed" in out and f"jaxrlkit-envs[{extra}]" in out


def test_envs_says_when_every_listed_backend_is_installed(capsys) -> None:
    code, out, _ = _run_cli(["envs", "--backend", "native"], capsys)
    assert code == 0 and "native/GridWorld" in out
    assert "every listed backend is installed: native" in out
