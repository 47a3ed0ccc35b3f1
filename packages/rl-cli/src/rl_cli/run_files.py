"""Where `rl run`'s options come from besides the command line: a TOML file of the same options
(`--config run.toml`), or the request a run recorded in its config.json (`--from RUN_DIR`: a new
run with exactly that request). The command line wins over both, `--config` over `--from`;
`--set` and `--env-arg` merge key by key. Every value is converted and checked as the command
line's is, so a wrong key or type in a file is one line naming the file and the key.

TOML, not YAML: Python reads it without a dependency (`tomllib`), its values are typed (a
learning rate stays a number, `"none"` stays text), and it has comments. A file holds the
options under their long names (dashes or underscores), `[set]` and `[env-arg]` as tables:

    algo = "ppo"
    env = "gymnax/CartPole-v1"
    num-seeds = 4
    [set]
    lr = 3e-4
    hidden_sizes = [128, 128]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from rl_cli.errors import UserError

TABLES = ("sets", "env_args")  # repeatable KEY=VALUE options, a table in a file
# Request fields a `--from` rerun does not take from the recorded run: the new run writes its own
# directory, with its own progress display; `--set` and `--env-arg` merge key by key instead.
NOT_RECORDED = ("logdir", "run_name", "progress", "sets", "env_kwargs")


def merged(ctx: click.Context, given: dict[str, Any], config: Path | None,
           from_run: Path | None) -> dict[str, Any]:
    """The command's parameter values: `given` (as click parsed the command line) over
    `config`'s over `from_run`'s."""
    base: dict[str, Any] = {}
    if from_run is not None:
        base.update(_recorded(from_run))
    if config is not None:
        for name, value in _file(ctx, config).items():
            base[name] = (*base.get(name, ()), *value) if name in TABLES else value
    out = dict(given)
    for name, value in base.items():
        if name in TABLES:
            out[name] = (*value, *given.get(name, ()))  # later assignments win: the command line
        elif ctx.get_parameter_source(name) in (None, click.core.ParameterSource.DEFAULT):
            out[name] = value
    return out


def _text(value: Any) -> str:
    """A TOML or JSON value as the text of `KEY=VALUE` on a command line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(_text(v) for v in value)
    return str(value)


def _file(ctx: click.Context, path: Path) -> dict[str, Any]:
    import tomllib

    try:
        data = tomllib.loads(path.read_text())
    except OSError as e:
        raise UserError(f"--config {path}: cannot read it ({e.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"--config {path} is not a TOML file: {e}") from None
    params = {p.name: p for p in ctx.command.params
              if isinstance(p, click.Option) and p.name not in ("config", "from_run")}
    names = {o.lstrip("-").replace("-", "_"): p.name for p in params.values() for o in p.opts}
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = names.get(key.replace("-", "_"))
        if name is None:
            known = ", ".join(sorted(k.replace("_", "-") for k in names))
            raise UserError(f"--config {path}: unknown key '{key}'; the keys are the options of "
                            f"`rl {ctx.command.name}`: {known}")
        param = params[name]
        if name in TABLES:
            if not isinstance(value, dict):
                raise UserError(f"--config {path}: '{key}' must be a table of KEY = VALUE "
                                f"(e.g. [{key}] then lr = 3e-4 on the next line)")
            out[name] = tuple(f"{k}={_text(v)}" for k, v in value.items())
            continue
        try:
            converted = param.type_cast_value(ctx, value)
            if param.callback is not None:
                converted = param.callback(ctx, param, converted)
        except click.BadParameter as e:
            raise UserError(f"--config {path}: {key}: {e.message}") from None
        out[name] = converted
    return out


def _recorded(run_dir: Path) -> dict[str, Any]:
    from rl_cli.rundir import read_run_config

    request = read_run_config(run_dir).get("request")
    if not isinstance(request, dict):
        raise UserError(f"--from {run_dir}: its config.json records no request (an `rl run` "
                        "directory has one)")
    from rl_cli.request import RunRequest, option_name

    fields = set(RunRequest.__dataclass_fields__) - set(NOT_RECORDED)
    out: dict[str, Any] = {option_name(k): v for k, v in request.items() if k in fields}
    if out.get("meta_params") is not None:
        out["meta_params"] = Path(out["meta_params"])
    out["sets"] = tuple(f"{k}={v}" for k, v in (request.get("sets") or {}).items())
    out["env_args"] = tuple(f"{k}={_text(v)}"
                            for k, v in (request.get("env_kwargs") or {}).items())
    return out
