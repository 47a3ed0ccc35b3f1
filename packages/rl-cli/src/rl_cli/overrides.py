"""Building a configuration from a preset plus `--set key=value` overrides, type-checked against
the fields of the algorithm's static config and traced hyperparameters."""

from __future__ import annotations

import dataclasses
import difflib
import math
import types
import typing
from typing import Any

from rl_algos import AlgoSpec
from rl_algos.common.config import field_types
from rl_cli.errors import UserError

_TRUE, _FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off"}


def parse_value(key: str, raw: str, typ: Any) -> Any:
    """Converts the text of `--set key=raw` to the field's type or raises a one-line UserError."""
    origin = typing.get_origin(typ)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(typ) if a is not type(None)]
        if raw.lower() == "none" and type(None) in typing.get_args(typ):
            return None
        typ, origin = args[0], typing.get_origin(args[0])
    try:
        if typ is bool:
            if raw.lower() in _TRUE:
                return True
            if raw.lower() in _FALSE:
                return False
            raise ValueError
        if typ is int:
            value = float(raw)
            if not value.is_integer():
                raise ValueError
            return int(value)
        if typ is float:
            value = float(raw)
            if not math.isfinite(value):
                raise UserError(f"--set {key}={raw}: expected a finite number (not nan or inf), "
                                f"e.g. {key}=3e-4")
            return value
        if typ is str:
            return raw
        if origin is tuple:
            (elem, *_) = typing.get_args(typ)
            parts = [p for p in raw.strip("()[] ").split(",") if p.strip()]
            return tuple(parse_value(key, p.strip(), elem) for p in parts)
    except UserError as e:
        if "finite" in str(e):
            raise
    except ValueError:
        pass
    else:
        raise UserError(f"--set {key}: fields of type {typ} cannot be set from the command line")
    name = getattr(typ, "__name__", str(typ))
    example = {"bool": "true", "int": "128", "float": "3e-4", "tuple": "64,64"}.get(name, "...")
    raise UserError(f"--set {key}={raw}: expected a value of type {name} (e.g. {key}={example})")


def parse_assignments(items: tuple[str, ...], what: str = "--set") -> dict[str, str]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"{what} expects key=value, got '{item}'")
        out[key.strip()] = value.strip()
    return out


def build_config(spec: AlgoSpec, preset: str | None, sets: dict[str, str],
                 total_timesteps: int | None) -> tuple[Any, Any]:
    """preset overrides -> --set overrides -> --total-timesteps; then validate both parts."""
    static_types, hp_types = field_types(spec.config_cls), field_types(spec.hparams_cls)
    static_kw: dict[str, Any] = {}
    hp_kw: dict[str, Any] = {}
    if preset is not None:
        if preset not in spec.presets:
            raise UserError(f"unknown preset '{preset}' for {spec.name}; "
                            f"known: {', '.join(spec.presets) or 'none'}")
        static_kw.update(spec.presets[preset].config)
        hp_kw.update(spec.presets[preset].hparams)
    for key, raw in sets.items():
        if key in static_types:
            static_kw[key] = parse_value(key, raw, static_types[key])
        elif key in hp_types:
            hp_kw[key] = parse_value(key, raw, hp_types[key])
        else:
            known = sorted({*static_types, *hp_types})
            close = difflib.get_close_matches(key, known, n=3, cutoff=0.5)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise UserError(f"--set {key}: {spec.name} has no such setting.{hint} "
                            f"Settings: {', '.join(known)}.")
    if total_timesteps is not None:
        static_kw["total_timesteps"] = int(total_timesteps)
    config = spec.config_cls(**static_kw)
    hparams = spec.hparams_cls(**hp_kw)
    config.validate()
    hparams.validate()
    return config, hparams


def as_jsonable(obj: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(obj):
        return {f.name: _plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    return {k: _plain(v) for k, v in obj._asdict().items()}


def _plain(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v
