"""What `rl envs` and `rl algos` print."""

from __future__ import annotations

import functools

from rl_cli.compile_cache import rl_cache_dir
from rl_cli.errors import UserError


@functools.cache  # once per process: `rl envs` asks for it for every backend
def _listing_key() -> str:
    """What `rl envs`' rows depend on: the installed version of every backend's library and
    this installation's adapter, space and listing code (hashed), so a cached listing is reused
    until one of them changes."""
    import hashlib
    import importlib.metadata
    from pathlib import Path

    import rl_core
    import rl_envs

    h = hashlib.sha256()
    for p, b in sorted(rl_envs.BACKENDS.items()):  # built in (plugins' rows are not kept)
        try:
            version = importlib.metadata.version(b.library) if b.library else "built in"
        except importlib.metadata.PackageNotFoundError:
            version = "missing"
        h.update(f"{p}={version};".encode())
    for package in (rl_envs, rl_core):
        for path in sorted(Path(str(package.__file__)).parent.glob("*.py")):
            h.update(path.read_bytes())
    h.update(Path(__file__).read_bytes())  # how the rows are written
    return h.hexdigest()[:16]


def env_rows(prefix: str) -> list[list[str]]:
    """`[id, family, observation space, action space]` of every id of an installed backend (for a
    multi-agent environment the observation says how many agents share the spaces).
    Building every environment to read its spaces takes tens of seconds (each library's import
    and constructors), so the rows are kept in `~/.cache/rl/envs/` (`RL_CACHE_DIR` moves it),
    keyed by `_listing_key`; an unwritable cache only means building them again next time. A
    backend an installed package registers is built every time (its code may be the user's
    work in progress)."""
    import json
    import os
    from pathlib import Path

    import rl_envs

    if rl_envs.backends()[prefix].plugin is not None:
        return _build_rows(prefix)
    folder = Path(os.environ.get("RL_CACHE_DIR") or rl_cache_dir()) / "envs"
    path = folder / f"{prefix}-{_listing_key()}.json"
    try:
        rows = json.loads(path.read_text())
        if isinstance(rows, list) and all(
                isinstance(r, list) and len(r) == 4 and all(isinstance(x, str) for x in r)
                for r in rows):
            return rows
    except (OSError, ValueError):  # none yet, unreadable or damaged: build the rows again
        pass
    rows = _build_rows(prefix)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(rows))
        os.replace(tmp, path)
    except OSError:
        pass
    return rows


def _build_rows(prefix: str) -> list[list[str]]:
    import rl_envs
    from rl_core import describe

    rows = []
    for env_id in rl_envs.list_envs(prefix, installed_only=False):
        observation_space, action_space = rl_envs.spaces(env_id)
        agents = rl_envs.agent_count(env_id)  # a multi-agent environment: each agent's spaces
        each = "" if agents is None else f"{agents} agent{'s' * (agents != 1)}, each "
        rows.append([env_id, rl_envs.family(env_id), each + describe(observation_space),
                     describe(action_space)])
    return rows


def print_envs(backend: str | None) -> None:
    """Every environment id with its family and spaces, grouped by backend (`rl envs`). Ids and
    families are never cut; the spaces wrap, so the table reads in an 80-column terminal."""
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    import rl_envs

    console = Console()
    known = rl_envs.backends()
    prefixes = [backend] if backend else list(known)
    missing = []
    for p in prefixes:
        if p not in known:
            raise UserError(f"unknown backend '{p}'; known: {', '.join(known)}")
        if not rl_envs.backend_installed(p):
            missing.append(p)
            ids = rl_envs.list_envs(p, installed_only=False)
            # escape: rich would take the extra's `[name]` for markup and drop it.
            console.print(f"[bold]{p}[/]: {len(ids)} environments, not installed — "
                          f"{escape(rl_envs.missing_extra_message(p))}", soft_wrap=True)
            continue
        rows = env_rows(p)
        source = f", from {known[p].plugin}" if known[p].plugin else ""
        table = Table(title=f"{p} ({len(rows)} environments{source})", title_justify="left",
                      box=box.SIMPLE_HEAD, pad_edge=False)
        table.add_column("id", no_wrap=True)  # ids stay greppable in a narrow terminal
        table.add_column("family", no_wrap=True)
        table.add_column("observation → action", ratio=1)
        for env_id, family, obs, act in rows:
            table.add_row(env_id, family, escape(f"{obs} → {act}"))
        console.print(table)
    extras = ", ".join(f"{p} (extra '{rl_envs.BACKENDS[p].extra}')" for p in missing)
    console.print(escape(f"missing backends: {extras}") if missing else
                  f"every listed backend is installed: {', '.join(prefixes)}")


def print_algos() -> None:
    """The algorithms, what they support (action spaces, legal-action masks, --data-parallel,
    evolved meta-parameters) and their presets (`rl algos`)."""
    from rich.console import Console
    from rich.table import Table

    import rl_algos

    table = Table(title="algorithms", title_justify="left")
    for col in ("name", "description", "action spaces", "supports"):
        table.add_column(col)
    table.add_column("presets", min_width=len("continuous_control"))
    for spec in rl_algos.ALGORITHMS.values():
        supports = [name for name, on in (("masks", spec.action_masks),
                                          ("data-parallel", spec.data_parallel),
                                          (f"meta:{spec.meta_field}", spec.meta_field))
                    if on]
        table.add_row(spec.name, spec.description,
                      ", ".join(t.__name__ for t in spec.action_spaces),
                      ", ".join(supports) or "-", ", ".join(spec.presets) or "-")
    Console().print(table)


def preset_toml(algo: str, preset: str | None) -> str:
    """Every setting of `algo` under `preset` (None or 'none': the defaults) as a TOML file
    `rl run --config` reads: the algorithm, the preset, and `[set]` with every static and
    traced field (a value `rl run` would use), `[env-arg]` with the preset's environment
    arguments."""
    import dataclasses

    import rl_algos
    from rl_cli.errors import UserError
    from rl_cli.overrides import build_config

    try:
        spec = rl_algos.get(algo)
    except (KeyError, ValueError) as e:
        raise UserError(str(e).strip("'\"")) from None
    chosen = None if preset in (None, "none") else preset
    config, hparams = build_config(spec, chosen, {}, None)
    values = {**dataclasses.asdict(config), **hparams._asdict()}
    lines = [f"# rl run --config FILE: {algo} with "
             + (f"the '{chosen}' preset" if chosen else "its defaults"),
             f'algo = "{algo}"', f'preset = "{chosen or "none"}"', "", "[set]"]
    lines += [f"{k} = {_toml(v)}" for k, v in values.items() if v is not None]
    env = spec.presets[chosen].env if chosen is not None and chosen in spec.presets else {}
    if env:
        lines += ["", "[env-arg]", *(f"{k} = {_toml(v)}" for k, v in env.items())]
    return "\n".join(lines) + "\n"


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value)
