"""Plots of an `rl evolve` run (matplotlib, Agg backend: files only, no screen): the fitness curve,
and the evolved function as a heat map next to the hand-designed one it replaces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_fitness(path: Path, history: list[dict[str, Any]], req: Any) -> None:
    """Best, mean and best-so-far fitness per generation, and PPO's level: 1 when the fitness is
    normalised by it, otherwise (one environment) its return on each generation's inner seeds."""
    plt = _pyplot()
    gens = [r["generation"] + 1 for r in history]
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ax.plot(gens, [r["best_fitness"] for r in history], "o-", label="best of generation")
    ax.plot(gens, [r["mean_fitness"] for r in history], "s-", label="population mean")
    ax.plot(gens, [r["best_so_far"] for r in history], "--", color="gray", label="best so far")
    if req.normalised:
        ax.axhline(1.0, color="k", ls=":", label="PPO (= 1)")
    elif len(req.envs) == 1 and all(r.get("ppo_return") for r in history):
        ax.plot(gens, [next(iter(r["ppo_return"].values())) for r in history], "k:", marker=".",
                label="PPO, same budget and seeds")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("generation")
    ax.set_ylabel("fitness (relative to PPO)" if req.normalised else "final return")
    ax.set_title(f"rl evolve --meta {req.meta}: {', '.join(req.envs)}\n"
                 f"{req.strategy}, population {req.population} x {req.inner_seeds} inner seeds",
                 fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def meta_function_grids(target: Any, params: Any, hparams: Any, n: int = 121,
                        progress: float = 0.0
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`(xs [n], ys [n], learned [n, n], hand [n, n])`, rows indexed by y; the learned function
    at training progress `progress` (for a target that reads it)."""
    import jax.numpy as jnp

    plot = target.plot
    xs = np.linspace(plot.x_range[0], plot.x_range[1], n).astype(np.float32)
    ys = np.linspace(plot.y_range[0], plot.y_range[1], n).astype(np.float32)
    x, y = np.meshgrid(xs, ys)
    learned = np.asarray(target.learned(params, jnp.asarray(x), jnp.asarray(y), progress))
    hand = np.asarray(target.hand(jnp.asarray(x), jnp.asarray(y), hparams))
    return xs, ys, learned, hand


def plot_meta_function(path: Path, target: Any, params: Any, hparams: Any, label: str) -> None:
    """Heat maps on the same axes: the evolved function (at each of the target's
    `progress_panels` when it reads the training progress, then its change between the first
    and the last) and the hand-designed one."""
    plt = _pyplot()
    panels: list[tuple[np.ndarray, str]] = []
    for p in target.progress_panels or (0.0,):
        xs, ys, learned, hand = meta_function_grids(target, params, hparams, progress=p)
        at = f" at n/N = {p:g}" if target.progress_panels else ""
        panels.append((learned, f"{target.plot.learned_title}{at}\n{label}"))
    # The learned panels share one colour scale; a function of the training progress also gets
    # its change from the first panel to the last (diverging colours, symmetric about 0). The
    # hand-designed function keeps its own scale.
    scale = (float(min(z.min() for z, _ in panels)), float(max(z.max() for z, _ in panels)))
    scales: list[tuple[float, float, str]] = [(*scale, "viridis")] * len(panels)
    if len(panels) > 1:
        change = panels[-1][0] - panels[0][0]
        bound = max(float(np.abs(change).max()), 1e-12)
        p0, p1 = target.progress_panels[0], target.progress_panels[-1]
        panels.append((change, f"change from n/N = {p0:g} to {p1:g}\n{label}"))
        scales.append((-bound, bound, "RdBu_r"))
    panels.append((hand, target.plot.hand_title))
    scales.append((float(hand.min()), float(hand.max()), "viridis"))
    extent = (float(xs[0]), float(xs[-1]), float(ys[0]), float(ys[-1]))
    fig, axes = plt.subplots(1, len(panels), figsize=(5.25 * len(panels), 4.2))
    for ax, (z, title), (vmin, vmax, cmap) in zip(axes, panels, scales, strict=True):
        im = ax.imshow(z, origin="lower", extent=extent, aspect="auto", cmap=cmap,
                       vmin=vmin, vmax=vmax)
        if np.ptp(z) > 0:
            ax.contour(xs, ys, z, levels=8, colors="white", linewidths=0.5, alpha=0.6)
        ax.set_xlabel(target.plot.x_label)
        ax.set_ylabel(target.plot.y_label)
        ax.set_title(title, fontsize=9)
        fig.colorbar(im, ax=ax)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
