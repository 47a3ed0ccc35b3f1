"""What `rl evolve` does with a request, as `runner` does for `rl run`: the run directory (new,
or the one resumed), the compiled programs, then generation after generation: ask, train, tell,
and the records (checkpoint, history, TensorBoard, meta-parameters, plots) that let a stopped
run continue."""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from rl_cli.errors import UserError
from rl_cli.evolve import BEST, MEAN, EvolveRequest, compile_programs, plan
from rl_cli.evolve_records import (
    CHECKPOINT,
    HISTORY,
    SETTINGS,
    Progress,
    generation_record,
    history_table,
    load_checkpoint,
    log_generation,
    read_history,
    save_checkpoint,
)
from rl_cli.meta_params import save_meta_params
from rl_cli.progress import header
from rl_cli.rundir import check_output
from rl_cli.session import claimed, holds_file, new_run_dir
from rl_cli.startup import resume_gc
from rl_cli.watchdog import Watchdog


def execute_evolve(req: EvolveRequest, logdir: Path = Path("runs"), run_name: str | None = None,
                   resume: Path | None = None, watchdog_seconds: float = 600.0,
                   console: Console | None = None) -> dict[str, Any]:
    """Runs (or continues) an evolution; returns the summary written to summary.json."""
    console = console or Console()
    if resume is None:
        check_output(logdir, run_name)
    p = plan(req)  # every user mistake surfaces here, before any file or compile

    import jax

    from rl_algos import evolve

    root = jax.random.PRNGKey(req.seed)
    state = evolve.initial_state(p.strategy, root, p.template)
    if resume is not None:
        run_dir = resume
        state, prog = load_checkpoint(run_dir, state, p.template)
        if prog.next_generation >= req.generations:
            raise UserError(f"--resume {run_dir}: {prog.next_generation} generations are done "
                            f"already; pass --generations N with N > {prog.next_generation} "
                            f"to continue")
    else:
        run_dir = new_run_dir(logdir, f"evolve-{req.meta}-{req.envs[0]}", run_name)
        prog = Progress(0, -math.inf, p.template, -1)
    # The directory's lock and the stop signals, as for `rl run`: an evolution stopped before
    # its first generation's checkpoint leaves no directory behind.
    with claimed(run_dir, fresh=resume is None, holds=holds_file(CHECKPOINT)):
        return _evolve(req, p, run_dir, state, prog, resume, root, watchdog_seconds, console)


def _evolve(req: EvolveRequest, p: Any, run_dir: Path, state: Any, prog: Progress,
            resume: Path | None, root: Any, watchdog_seconds: float,
            console: Console) -> dict[str, Any]:
    """Generation after generation in the claimed `run_dir`, from `prog.next_generation` on;
    returns the summary written to summary.json."""
    import jax.numpy as jnp

    from rl_algos import evolve
    from rl_cli.evolve_plots import plot_fitness, plot_meta_function
    from rl_cli.machine import computing_on, machine_change, machine_record, started_machine
    from rl_cli.resume import refuse_rebuilt

    # A resumed evolution keeps the machine it started on (and says when this one differs).
    earlier = None
    if resume is not None:
        try:
            earlier = json.loads((run_dir / SETTINGS).read_text())
        except (OSError, ValueError):  # missing or damaged: it is rewritten below
            earlier = None
    rebuilt = {"config": dataclasses.asdict(p.config), "hparams": p.hparams._asdict()}
    if earlier is not None:  # a preset or default changed since: refuse, as `rl resume` does
        refuse_rebuilt(rebuilt, {k: earlier[k] for k in rebuilt if k in earlier},
                       run_dir / SETTINGS, SETTINGS)
    note = machine_change(earlier) if earlier is not None else ""
    if note:
        console.print(escape(note))
    (run_dir / SETTINGS).write_text(json.dumps({
        "request": dataclasses.asdict(req), **rebuilt,
        "num_meta_params": int(p.strategy.es.num_dims),
        **(machine_record() if earlier is None else started_machine(earlier)),
        "command": sys.argv}, indent=2))
    history = read_history(run_dir, prog.next_generation)

    from tensorboardX import SummaryWriter

    writer = SummaryWriter(str(run_dir / "tb"), purge_step=prog.next_generation)
    e, s = len(p.envs), req.inner_seeds
    steps = p.config.num_updates * p.config.batch_size
    devices = "1 device" if p.mesh is None else f"population sharded over {p.mesh.devices.size} " \
                                                f"devices"
    header(console,
        f"[bold]rl evolve[/] --meta {req.meta}", req.strategy,
        f"population {req.population} x {s} inner seed(s) x {e} env(s)",
        f"{steps:,} steps per inner agent", f"{p.strategy.es.num_dims} meta-parameters",
        devices, escape(computing_on()), f"run dir {escape(str(run_dir))}")
    with Watchdog(watchdog_seconds) as dog:
        dog.beat("compiling the population's training program")
        with console.status("compiling the population's training program…", spinner="dots"):
            evaluate, baseline_fn, compile_s = compile_programs(p, req.baseline)
        console.print(f"compiled in {compile_s:.2f} s")
        resume_gc()  # start-up is over (rl_cli.startup)

        def fitness_of(returns: Any, reference: Any) -> Any:
            norm = jnp.nanmean(reference, axis=-1) if req.normalised else None
            return evolve.combine_fitness(returns, norm)

        for g in range(prog.next_generation, req.generations):
            dog.beat(f"running generation {g + 1}/{req.generations}")
            t0 = time.perf_counter()
            state, res = evolve.run_generation(p.strategy, state, root, g, evaluate, e, s,
                                               fitness_of, baseline_fn)
            seconds = time.perf_counter() - t0
            best_now = float(res.fitness[res.best_index])
            if best_now > prog.best_fitness:
                prog.best_fitness, prog.best_params, prog.best_generation = (
                    best_now, res.best_params, g)
            prog.next_generation = g + 1
            mean_params = p.strategy.es.get_mean(state)
            save_checkpoint(run_dir, state, prog)
            save_meta_params(run_dir / BEST, req.meta, prog.best_params, prog.best_generation,
                             prog.best_fitness)
            save_meta_params(run_dir / MEAN, req.meta, mean_params, g, math.nan)
            record = generation_record(g, res, prog, seconds, req.envs)
            history.append(record)
            with open(run_dir / HISTORY, "a") as f:
                f.write(json.dumps(record) + "\n")
            log_generation(writer, record, req.envs)
            plot_fitness(run_dir / "fitness.png", history, req)
            plot_meta_function(run_dir / "meta_function.png", p.target, mean_params, p.hparams,
                               f"the strategy's mean after generation {g + 1}")
            plot_meta_function(run_dir / "meta_function_best.png", p.target, prog.best_params,
                               p.hparams, f"best member so far (generation "
                                          f"{prog.best_generation + 1})")
            ppo = "" if res.reference is None else "  PPO " + " ".join(
                f"{v:.2f}" if v is not None else "-" for v in record["ppo_return"].values())
            console.print(f"gen {g + 1:>3}/{req.generations}  best {best_now:9.3f}  mean "
                          f"{record['mean_fitness']:9.3f}  best so far {prog.best_fitness:9.3f}"
                          f"{ppo}  ({seconds:.1f} s)", soft_wrap=True)
    writer.flush()
    writer.close()
    summary = {
        "meta": req.meta, "envs": req.envs, "strategy": req.strategy,
        "population": req.population, "inner_seeds": s, "steps_per_inner_agent": steps,
        "generations_done": prog.next_generation, "best_fitness": prog.best_fitness,
        "best_generation": prog.best_generation,
        "fitness_normalised_by_ppo": req.normalised, "parallelism": devices,
        "compile_seconds": compile_s,
        "generation_seconds": [r["seconds"] for r in history],
        "run_dir": str(run_dir),
    }
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    console.print(history_table(history, req))
    return summary
