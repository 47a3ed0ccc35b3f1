"""What `rl evolve` keeps in its run directory and shows: the strategy's checkpoint and the run's
progress, one record per generation (history.jsonl, TensorBoard, the closing table)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from rich.table import Table

from rl_cli.errors import UserError
from rl_cli.meta_params import save_npz
from rl_cli.stats import finite_or_none

CHECKPOINT, HISTORY, SETTINGS = "checkpoint.npz", "history.jsonl", "evolve.json"


class Progress:
    """What a checkpoint holds besides the strategy state."""

    def __init__(self, next_generation: int, best_fitness: float, best_params: Any,
                 best_generation: int):
        self.next_generation = next_generation
        self.best_fitness = best_fitness
        self.best_params = best_params
        self.best_generation = best_generation


def save_checkpoint(run_dir: Path, state: Any, prog: Progress) -> None:
    """The strategy's whole state (every leaf, in tree order) and the run's progress, in one
    atomically replaced file."""
    import jax

    leaves = {f"state_{i}": np.asarray(x) for i, x in enumerate(jax.tree.leaves(state))}
    best = {f"best_{k}": np.asarray(v) for k, v in prog.best_params._asdict().items()}
    save_npz(run_dir / CHECKPOINT, next_generation=np.asarray(prog.next_generation),
             best_fitness=np.asarray(prog.best_fitness),
             best_generation=np.asarray(prog.best_generation), **leaves, **best)


def load_checkpoint(run_dir: Path, state_like: Any, params_like: Any) -> tuple[Any, Progress]:
    import jax
    import jax.numpy as jnp

    path = run_dir / CHECKPOINT
    if not path.is_file():
        raise UserError(f"--resume {run_dir}: no {CHECKPOINT} (the run stopped before its first "
                        f"generation finished); start it again without --resume")
    with np.load(path, allow_pickle=False) as f:
        data = {k: f[k] for k in f.files}
    like = jax.tree.leaves(state_like)
    stored = [data.get(f"state_{i}") for i in range(len(like))]
    if any(x is None or x.shape != np.shape(y) for x, y in zip(stored, like, strict=True)):
        raise UserError(f"--resume {run_dir}: {CHECKPOINT} does not match the strategy recorded "
                        f"in {SETTINGS}; was either file edited?")
    state = jax.tree.unflatten(jax.tree.structure(state_like),
                               [jnp.asarray(x, dtype=np.asarray(y).dtype)
                                for x, y in zip(stored, like, strict=True)])
    best = type(params_like)(**{k: data[f"best_{k}"] for k in params_like._fields})
    prog = Progress(int(data["next_generation"]), float(data["best_fitness"]), best,
                    int(data["best_generation"]))
    return state, prog


def nanmean(x: Any, axis: int | None = None) -> Any:
    """Mean over the finite entries (NaN where there are none: no episode ended), silently."""
    x = np.asarray(x, np.float64)
    finite = np.isfinite(x)
    count = finite.sum(axis=axis)
    total = np.where(finite, x, 0.0).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def generation_record(g: int, res: Any, prog: Progress, seconds: float,
                      envs: list[str]) -> dict[str, Any]:
    """history.jsonl's line for generation `g` (`res`: the generation's result)."""
    fit = res.fitness
    per_env = nanmean(res.returns, axis=-1)  # [P, E]
    return {
        "generation": g, "best_fitness": float(fit.max()), "mean_fitness": float(fit.mean()),
        "median_fitness": float(np.median(fit)), "best_so_far": prog.best_fitness,
        "best_member": res.best_index,
        "best_member_return": {n: finite_or_none(per_env[res.best_index, i])
                               for i, n in enumerate(envs)},
        "mean_return": {n: finite_or_none(nanmean(per_env[:, i])) for i, n in enumerate(envs)},
        "ppo_return": None if res.reference is None else {
            n: finite_or_none(nanmean(res.reference[i])) for i, n in enumerate(envs)},
        "seconds": round(seconds, 3),
    }


def read_history(run_dir: Path, generations: int) -> list[dict[str, Any]]:
    """The first `generations` lines of history.jsonl (lines a stopped run wrote after its last
    checkpoint are dropped, and the file is rewritten to match)."""
    path = run_dir / HISTORY
    if not path.is_file():
        return []
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    kept = [r for r in lines if r["generation"] < generations]
    path.write_text("".join(json.dumps(r) + "\n" for r in kept))
    return kept


def log_generation(writer: Any, record: dict[str, Any], envs: list[str]) -> None:
    g = record["generation"]
    for k in ("best_fitness", "mean_fitness", "median_fitness", "best_so_far"):
        writer.add_scalar(f"fitness/{k}", record[k], g)
    for n in envs:
        for k in ("best_member_return", "mean_return", "ppo_return"):
            v = None if record[k] is None else record[k][n]
            if v is not None:
                writer.add_scalar(f"{k}/{n}", v, g)
    writer.add_scalar("perf/generation_seconds", record["seconds"], g)
    writer.flush()


def history_table(history: list[dict[str, Any]], req: Any) -> Table:
    t = Table(title=f"rl evolve --meta {req.meta} on {', '.join(req.envs)}: fitness per "
                    f"generation ({'relative to PPO' if req.normalised else 'final return'})")
    for col in ("generation", "best", "mean", "best so far", "PPO return (same seeds)",
                "seconds"):
        t.add_column(col, justify="right")
    for r in history:
        ppo = "-" if r.get("ppo_return") is None else " ".join(
            f"{v:.2f}" if v is not None else "-" for v in r["ppo_return"].values())
        t.add_row(str(r["generation"] + 1), f"{r['best_fitness']:.3f}",
                  f"{r['mean_fitness']:.3f}", f"{r['best_so_far']:.3f}", ppo,
                  f"{r['seconds']:.1f}")
    return t
