"""Config helpers shared by every algorithm.

Each algorithm has two config types:
* a frozen dataclass of *static* fields (sizes, counts, switches): they shape the compiled program,
  so changing one means compiling again, and a sweep cannot vary them;
* a NamedTuple of *traced* float hyperparameters (learning rate, discount, ...): they are inputs
  of `train(key, hparams)`, so `jax.vmap` can give every member its own values.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import jax
import jax.numpy as jnp


class ConfigError(ValueError):
    """Invalid configuration; the message names the field and how to fix it."""


def require(cond: bool, msg: str) -> None:
    if not cond:
        raise ConfigError(msg)


def hparams_as_arrays(hp: Any) -> Any:
    """float32 arrays for every traced hyperparameter (a uniform pytree for vmap); `hp` is an
    hparams NamedTuple. Scalars become `[]` arrays; a field holding a pytree (the meta-network
    parameters of LPO) has each of its leaves converted; `None` stays `None`."""
    return hp._make(jax.tree.map(lambda x: jnp.asarray(x, jnp.float32), v) for v in hp)


def field_types(cls: Any) -> dict[str, Any]:
    """Resolved field types of a config dataclass or hparams NamedTuple."""
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)] if dataclasses.is_dataclass(cls) \
        else list(cls._fields)
    return {n: hints[n] for n in names}


def to_dict(obj: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(obj):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    return dict(obj._asdict())
