"""What a training command shows while it runs, at any terminal width: the header of the run
(broken between its parts), and the progress bar (steps, steps/s and the mean return in at most
80 columns)."""

from __future__ import annotations

import math

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


class ProgressView:
    """A rich progress bar: steps done (per member), aggregate steps/s, current mean return."""

    def __init__(self, console: Console, total_steps: int, num_members: int, enabled: bool,
                 steps_before: int = 0):
        """`steps_before`: steps per member done in earlier sessions of a resumed run (the bar
        starts there; steps/s counts this session's steps only)."""
        self.num_members = num_members
        self.steps_before = steps_before
        # Fits 80 columns whole: steps and steps/s in engineering notation (`499k/500k`).
        self.total = compact(total_steps)
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=14),
            TextColumn("{task.fields[steps]:>11} steps {task.fields[sps]:>5}/s "
                       "return {task.fields[ret]:>6}"),
            TimeElapsedColumn(),
            TextColumn("left"),
            TimeRemainingColumn(),
            console=console,
            disable=not enabled,
            transient=False,
        )
        self.task = self.progress.add_task(
            "training", total=total_steps, sps="-", ret="-", completed=steps_before,
            steps=f"{compact(steps_before)}/{self.total}")

    def __enter__(self) -> ProgressView:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def update(self, steps_done: int, elapsed: float, mean_return: float) -> None:
        sps = (steps_done - self.steps_before) * self.num_members / max(elapsed, 1e-9)
        ret = f"{mean_return:.1f}" if math.isfinite(mean_return) else "-"
        self.progress.update(self.task, completed=steps_done, sps=compact(sps), ret=ret,
                             steps=f"{compact(steps_done)}/{self.total}")


def header(console: Console, *parts: str) -> None:
    """Prints `parts` joined by " · ", breaking lines only between parts where the terminal is
    narrower than the whole (a part longer than a line, such as a long path, gets its own)."""
    from rich.text import Text

    lines: list[list[str]] = [[]]
    width = 0
    for part in (p for p in parts if p):
        size = Text.from_markup(part).cell_len
        if lines[-1] and width + 3 + size > console.width:
            lines.append([])
            width = 0
        width += size + (3 if lines[-1] else 0)
        lines[-1].append(part)
    for line in lines:
        console.print(" · ".join(line), soft_wrap=True)


def compact(n: float) -> str:
    """`n` in at most 4 characters: 512, 4.1k, 500k, 12M, 2.1G (3 significant digits at most)."""
    v, unit = float(n), ""
    for next_unit in ("k", "M", "G"):
        if abs(float(f"{v:.3g}")) < 1000:
            break
        v, unit = v / 1000, next_unit
    return (f"{v:.1f}" if unit and abs(v) < 9.95 else f"{v:.0f}") + unit
