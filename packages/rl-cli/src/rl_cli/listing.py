"""What `rl envs` and `rl algos` print."""

from __future__ import annotations

from rl_cli.errors import UserError


def print_envs(backend: str | None) -> None:
    """Every environment id with its family and spaces, grouped by backend (`rl envs`)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    import rl_envs
    from rl_core import describe

    console = Console()
    prefixes = [backend] if backend else list(rl_envs.BACKENDS)
    missing = []
    for p in prefixes:
        if p not in rl_envs.BACKENDS:
            raise UserError(f"unknown backend '{p}'; known: {', '.join(rl_envs.BACKENDS)}")
        ids = rl_envs.list_envs(p, installed_only=False)
        if not rl_envs.backend_installed(p):
            missing.append(p)
            # escape: rich would take the extra's `[name]` for markup and drop it.
            console.print(f"[bold]{p}[/]: {len(ids)} environments, not installed — "
                          f"{escape(rl_envs.missing_extra_message(p))}", soft_wrap=True)
            continue
        table = Table(title=f"{p} ({len(ids)} environments)", title_justify="left")
        table.add_column("id", no_wrap=True)  # ids stay greppable in a narrow terminal
        for col in ("family", "observation", "action"):
            table.add_column(col)
        for env_id in ids:
            env = rl_envs.make(env_id)
            table.add_row(env_id, rl_envs.family(env_id), describe(env.observation_space),
                          describe(env.action_space))
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
