"""Config types and checks shared by every algorithm.

Each algorithm has two config types:
* a frozen dataclass of *static* fields (sizes, counts, switches): they shape the compiled program,
  so changing one means compiling again, and a sweep cannot vary them. The rollout fields and
  their checks are written once (`RolloutConfig`, `MinibatchConfig`; `networks.check_network`);
* an `@hparams` class of *traced* float hyperparameters (learning rate, discount, ...): they are
  inputs of `train(key, hparams)`, so `jax.vmap` can give every member its own values. Such a
  class extends another by subclassing (DPO's are PPO's plus `alpha` and `beta`), and is a pytree
  whose leaves are its fields in order, with the NamedTuple API the rest of the code uses
  (`_fields`, `_replace`, `_asdict`, `_make`, iteration).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeVar, dataclass_transform

import jax
import jax.numpy as jnp

# Steps and updates are counted in int32 inside the compiled programs (the update counter, the
# environment steps behind a target network's interval or an ε schedule).
MAX_TIMESTEPS = 2**31 - 1


class ConfigError(ValueError):
    """Invalid configuration; the message names the field and how to fix it."""


def require(cond: bool, msg: str) -> None:
    if not cond:
        raise ConfigError(msg)


def require_positive(obj: Any, *names: str) -> None:
    """Each named integer field of `obj` is >= 1."""
    for name in names:
        require(getattr(obj, name) >= 1, f"{name} must be >= 1, got {getattr(obj, name)}")


def check_ranges(obj: Any, *, positive: tuple[str, ...] = (), non_negative: tuple[str, ...] = (),
                 unit: tuple[str, ...] = ()) -> None:
    """Each named field of `obj` is > 0 (`positive`), >= 0 (`non_negative`), or in [0, 1]
    (`unit`: discounts, λ, probabilities)."""
    for name in positive:
        require(getattr(obj, name) > 0, f"{name} must be > 0, got {getattr(obj, name)}")
    for name in non_negative:
        require(getattr(obj, name) >= 0, f"{name} must be >= 0, got {getattr(obj, name)}")
    for name in unit:
        v = getattr(obj, name)
        require(0 <= v <= 1, f"{name} must be in [0, 1], got {v}")


def check_divides(batch: int, parts: int, field: str) -> None:
    """`parts` (the value of config field `field`) splits `batch` transitions evenly."""
    require(batch % parts == 0,
            f"{field}={parts} must divide the batch num_envs*num_steps={batch}; pick a divisor "
            f"of {batch} or change num_envs/num_steps")


@dataclass(frozen=True)
class RolloutConfig:
    """The rollout every algorithm collects per update: `num_steps` vector steps of `num_envs`
    environments (subclasses redeclare a field to change its default)."""

    total_timesteps: int = 500_000
    num_envs: int = 4
    num_steps: int = 128  # rollout length per environment per update

    @property
    def steps_per_update(self) -> int:
        return self.num_envs * self.num_steps

    @property
    def num_updates(self) -> int:
        return self.total_timesteps // self.steps_per_update

    def validate(self) -> None:
        require_positive(self, "num_envs", "num_steps")
        require(self.total_timesteps <= MAX_TIMESTEPS,
                f"total_timesteps={self.total_timesteps:,} is beyond what one run counts (at most "
                f"{MAX_TIMESTEPS:,} environment steps per agent: its counters are int32); "
                "train in several runs")
        require(
            self.total_timesteps >= self.steps_per_update,
            f"total_timesteps={self.total_timesteps} is less than one update "
            f"(num_envs*num_steps={self.steps_per_update}); raise it or shrink the batch",
        )


@dataclass(frozen=True)
class BatchConfig(RolloutConfig):
    """An on-policy rollout used as one batch of `num_envs * num_steps` transitions."""

    @property
    def batch_size(self) -> int:
        return self.steps_per_update


@dataclass(frozen=True)
class MinibatchConfig(BatchConfig):
    """A batch learnt from in `num_epochs` passes of `num_minibatches` shuffled minibatches."""

    num_epochs: int = 4
    num_minibatches: int = 4

    @property
    def minibatch_size(self) -> int:
        return self.batch_size // self.num_minibatches

    def validate(self) -> None:
        super().validate()
        require_positive(self, "num_epochs", "num_minibatches")
        check_divides(self.batch_size, self.num_minibatches, "num_minibatches")


class HParamsBase:
    """The NamedTuple API over an `@hparams` dataclass (its fields, in order, are its leaves)."""

    _fields: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[Any]:
        return (getattr(self, f) for f in self._fields)

    def __len__(self) -> int:
        return len(self._fields)

    def _replace(self, **changes: Any) -> Any:
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    def _asdict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self._fields}

    @classmethod
    def _make(cls, values: Any) -> Any:
        return cls(*values)

    def validate(self) -> None:
        """Each subclass checks its own fields and calls `super().validate()`."""


H = TypeVar("H", bound=type)


@dataclass_transform(frozen_default=True)
def hparams(cls: H) -> H:
    """Makes `cls` (a subclass of `HParamsBase` with annotated, defaulted fields) a frozen
    dataclass registered as a pytree whose leaves are its fields in declaration order (inherited
    first). A subclass adds fields: `@hparams class DPOHParams(PPOHParams): alpha: float = 2.0`."""
    made: Any = dataclass(frozen=True)(cls)
    names = tuple(f.name for f in dataclasses.fields(made))
    made._fields = names
    jax.tree_util.register_dataclass(made, data_fields=list(names), meta_fields=[])
    return made


def hparams_as_arrays(hp: Any) -> Any:
    """float32 arrays for every traced hyperparameter (a uniform pytree for vmap); `hp` is an
    `@hparams` instance. Scalars become `[]` arrays; a field holding a pytree (the meta-network
    parameters of LPO) has each of its leaves converted; `None` stays `None`."""
    return hp._make(jax.tree.map(lambda x: jnp.asarray(x, jnp.float32), v) for v in hp)


def field_types(cls: Any) -> dict[str, Any]:
    """Resolved field types of a config or hparams dataclass."""
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    return {n: hints[n] for n in names}

