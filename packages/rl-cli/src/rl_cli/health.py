"""Numeric health of a run, read after each chunk from what the compiled program reports:
non-finite values (NaN/inf in any metric or in the agent's parameters, flagged inside the program
by `rl_core.chunk_health`) and clearly diverging losses (judged here, on the host, from the
chunk's metrics).

A member *diverges* when, in some chunk, the chunk mean of the magnitude of one of its losses
(metrics named `loss/*`, `loss` or `*_loss`) exceeds `LOSS_LIMIT` (1e6), or exceeds
`LOSS_GROWTH` (1e3) times the larger of 1 and its magnitude in the first chunk where it was not
zero (an off-policy learner reports 0 until it starts learning). The floor of 1 keeps losses
that start near zero (a policy loss of 1e-3) from counting a move to 1 as growth; a finite loss
that passes either bound is far outside the range of a training run that works (PPO's value
loss on CartPole stays below 1e2, at lr=1e3 it reaches 5.6e7). Non-finite values are always
reported; `--halt-on-nan` stops there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rl_cli.errors import RunHalted

LOSS_LIMIT = 1e6
LOSS_GROWTH = 1e3


def is_loss(name: str) -> bool:
    return name.startswith("loss/") or name == "loss" or name.endswith("_loss")


class NonFiniteHalt(RunHalted):
    """`--halt-on-nan` stopped the run at the first chunk with non-finite values."""


@dataclass
class MemberHealth:
    nonfinite_update: int | None = None  # first update (1-based) with a NaN/inf metric
    nonfinite_params_update: int | None = None  # end of the first chunk with NaN/inf params
    diverged_update: int | None = None  # first chunk end where a loss passed the bounds
    diverged_metric: str | None = None
    diverged_value: float | None = None

    @property
    def nonfinite(self) -> bool:
        return self.nonfinite_update is not None or self.nonfinite_params_update is not None

    @property
    def status(self) -> str:
        if self.nonfinite:
            return "non-finite"
        return "diverging" if self.diverged_update is not None else "ok"

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "first_nonfinite_metric_update": self.nonfinite_update,
                "first_nonfinite_params_update": self.nonfinite_params_update,
                "diverged_update": self.diverged_update, "diverged_metric": self.diverged_metric,
                "diverged_value": self.diverged_value}


def loss_magnitudes(metrics: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`[M]` chunk means of |loss| for every loss metric (`is_loss`; NaN when the chunk's values
    are not finite)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return {k: np.mean(np.abs(np.asarray(v, np.float64)), axis=1)
                for k, v in metrics.items() if is_loss(k)}


def diverging(first: float, now: float) -> bool:
    """The criterion of the module docstring for one loss of one member."""
    if not np.isfinite(now):
        return False  # reported as non-finite instead
    base = max(1.0, first) if np.isfinite(first) else 1.0
    return bool(now > LOSS_LIMIT or now > LOSS_GROWTH * base)


@dataclass
class HealthMonitor:
    """Fed every `ChunkReport`; keeps each member's `MemberHealth`, returns the warning lines a
    chunk adds, and with `halt_on_nan` raises `NonFiniteHalt` at the first non-finite chunk."""

    names: list[str]
    halt_on_nan: bool = False
    members: list[MemberHealth] = field(default_factory=list)
    first_losses: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.members = [MemberHealth() for _ in self.names]

    def observe(self, rep: Any) -> list[str]:
        chunk_len = next(iter(rep.metrics.values())).shape[1]
        start = rep.updates_done - chunk_len  # updates before this chunk
        new_nonfinite: list[tuple[str, int, str]] = []
        new_diverged: list[str] = []
        health = rep.health or {}
        first_bad = np.asarray(health.get("first_nonfinite_update", np.full(len(self.names), -1)))
        params_ok = np.asarray(health.get("params_finite", np.ones(len(self.names), bool)))
        mags = loss_magnitudes(rep.metrics)
        for key, now in mags.items():  # each loss's first non-zero chunk value (NaN: none yet)
            ref = self.first_losses.setdefault(key, np.full(len(self.names), np.nan))
            unset = np.isnan(ref) & (now != 0)
            ref[unset] = now[unset]
        for i, (name, h) in enumerate(zip(self.names, self.members, strict=True)):
            if h.nonfinite_update is None and first_bad[i] >= 0:
                h.nonfinite_update = start + int(first_bad[i]) + 1
                new_nonfinite.append((name, h.nonfinite_update, "metrics"))
            if h.nonfinite_params_update is None and not params_ok[i]:
                h.nonfinite_params_update = rep.updates_done
                if h.nonfinite_update is None or h.nonfinite_update > start:
                    new_nonfinite.append((name, rep.updates_done, "parameters"))
            if h.diverged_update is None and not h.nonfinite:
                for key, now in mags.items():
                    if diverging(float(self.first_losses[key][i]), float(now[i])):
                        h.diverged_update, h.diverged_metric = rep.updates_done, key
                        h.diverged_value = float(now[i])
                        new_diverged.append(f"{name} ({key} = {now[i]:.3g} at update "
                                            f"{rep.updates_done})")
                        break
        lines = []
        if new_nonfinite:
            by_member: dict[str, list[str]] = {}
            for n, u, what in new_nonfinite:
                by_member.setdefault(n, []).append(f"{what} at update {u}")
            where = ", ".join(f"{n} ({'; '.join(w)})" for n, w in by_member.items())
            lines.append(f"warning: non-finite values (NaN/inf) in {where}")
            if self.halt_on_nan:
                first = min(u for _, u, _ in new_nonfinite)
                raise NonFiniteHalt(
                    f"--halt-on-nan: non-finite values in {where}; stopped after update "
                    f"{rep.updates_done} (first non-finite update {first}); the non-finite state "
                    "is not saved (no params.eqx; earlier checkpoints are kept), metrics.jsonl "
                    "holds the chunks so far; lower the learning rate or check the "
                    "environment's rewards")
        if new_diverged:
            lines.append(f"warning: diverging loss (above {LOSS_LIMIT:.0e}, or {LOSS_GROWTH:.0e}x "
                         f"its first non-zero chunk value) in {', '.join(new_diverged)}")
        return lines

    def flagged(self) -> list[tuple[str, MemberHealth]]:
        return [(n, h) for n, h in zip(self.names, self.members, strict=True)
                if h.status != "ok"]

    def summary(self) -> dict[str, Any]:
        """For summary.json: each member's health and the names of the flagged ones."""
        return {
            "health_criterion": f"non-finite: any NaN/inf metric or agent parameter; diverging: "
                                f"a chunk's mean |loss| (loss/*, *_loss) above {LOSS_LIMIT:g} "
                                f"or above {LOSS_GROWTH:g} x max(1, its first non-zero chunk "
                                "value)",
            "health_per_member": [h.as_dict() for h in self.members],
            "nonfinite_members": [n for n, h in self.flagged() if h.status == "non-finite"],
            "diverging_members": [n for n, h in self.flagged() if h.status == "diverging"],
        }
