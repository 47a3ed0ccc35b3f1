"""The `rl` commands that look at finished runs and at what is installed: `eval` (play the
agents), `render` (watch one), `plot` (learning curves), `envs` and `algos` (the listings).
Each loads what it needs when it runs, so `rl --help` stays fast."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("eval")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--episodes", "--games", "episodes", default=100, show_default=True, type=int,
              help="Episodes (games) each member plays.")
@click.option("--stochastic", is_flag=True,
              help="Sample actions as in training instead of acting greedily.")
@click.option("--opponent", default=None,
              help="On a game with built-in opponents, the one to play (e.g. random, greedy, "
                   "mcts:64 for a search with 64 simulations a move; default: the game's "
                   "first).")
@click.option("--env", "env_id", default=None,
              help="Play on this environment instead of the run's (same spaces).")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Seeds the episodes; every member plays the same ones.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), default=None,
              help="Where to write the results (default: RUN_DIR/eval-<policy>.json, "
                   "eval-<policy>-vs-<opponent>.json against an opponent, ':' as '-').")
def eval_(run_dir: Path, episodes: int, stochastic: bool, opponent: str | None,
          env_id: str | None, seed: int, json_path: Path | None) -> None:
    """Play a run's trained agents for whole episodes (greedy unless --stochastic): mean return
    and 95% CI per member and over members; on two-player games also win/draw/loss rates."""
    import json

    from rich.console import Console

    from rl_cli.evaluate import eval_table, evaluate
    from rl_cli.resume import write_atomic

    res = evaluate(run_dir, episodes=episodes, seed=seed, env_id=env_id, stochastic=stochastic,
                   opponent=opponent)
    mode = "greedy" if res.deterministic else "stochastic"
    path = json_path or Path(res.run_dir) / (
        f"eval-{mode}" + (f"-vs-{res.opponent.replace(':', '-')}" if res.opponent else "")
        + ".json")
    write_atomic(path, json.dumps(res.as_dict(), indent=2))
    Console().print(eval_table(res))
    Console().print(f"written to {path}")


@click.command("render")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--out", "-o", type=click.Path(path_type=Path), default=None,
              help="The file to write (default RUN_DIR/render-<member> with the renderer's "
                   "suffix: .gif for gymnax and jumanji, .html for brax, .svg for pgx, .png for "
                   "GridWorld).")
@click.option("--member", default=0, show_default=True, type=int,
              help="Which member of the run plays (0 = the first seed).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seeds the episode.")
@click.option("--stochastic", is_flag=True,
              help="Sample actions as in training instead of acting greedily.")
@click.option("--max-steps", default=1000, show_default=True, type=int,
              help="Stop drawing after this many steps.")
@click.option("--opponent", default=None,
              help="On a game with built-in opponents, the one to play (e.g. random, greedy, "
                   "mcts:64 for a search with 64 simulations a move; default: the game's "
                   "first).")
def render_(run_dir: Path, out: Path | None, member: int, seed: int, stochastic: bool,
            max_steps: int, opponent: str | None) -> None:
    """Watch a trained agent: one episode of a member, drawn by the environment library's own
    renderer."""
    from rich.console import Console

    from rl_cli.render import render

    with Console(stderr=True).status("loading the run…", spinner="dots") as status:
        res = render(run_dir, out, member, seed, stochastic, max_steps, opponent=opponent,
                     on_phase=lambda text: status.update(text + "…"))
    ended = "ended" if res.finished else f"still running after {res.length} steps"
    click.echo(f"wrote {res.path}: {res.member}, return {res.episode_return:.2f} over "
               f"{res.length} steps (episode {ended}), {res.seconds:.1f} s")


@click.command()
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--out", "-o", type=click.Path(path_type=Path), required=True,
              help="The picture to write (.png, .svg or .pdf).")
@click.option("--label", "labels", multiple=True,
              help="A legend label per run, in order (default: algorithm, environment and the "
                   "settings that differ between the runs).")
@click.option("--members", is_flag=True, help="Also draw every member's curve faintly.")
@click.option("--eval", "evaluation", is_flag=True,
              help="Also draw the periodic greedy evaluations (runs with --eval-every), dashed "
                   "(with the return only).")
@click.option("--metric", default="episode_return", show_default=True,  # plots.RETURN
              help="The logged quantity to draw (a numeric key of metrics.jsonl, e.g. "
                   "loss/approx_kl, loss/entropy).")
def plot(run_dirs: tuple[Path, ...], out: Path, labels: tuple[str, ...], members: bool,
         evaluation: bool, metric: str) -> None:
    """Overlay the learning curves of `rl run` directories: each run's mean return (or another
    logged --metric) over its members with a 95% band, against environment steps."""
    from rl_cli.plots import plot_runs

    path = plot_runs(list(run_dirs), out, list(labels) or None, members, evaluation, metric)
    click.echo(f"wrote {path}")


@click.command()
@click.option("--backend", default=None, help="Only this backend (gymnax, ...).")
def envs(backend: str | None) -> None:
    """List every environment id with its spaces, grouped by backend."""
    from rl_cli.listing import print_envs

    print_envs(backend)


@click.command()
@click.argument("algo", required=False)
@click.option("--preset", default=None,
              help="With ALGO: print every setting of this preset ('none': the defaults) as a "
                   "TOML file for `rl run --config`.")
def algos(algo: str | None, preset: str | None) -> None:
    """List the algorithms, what they support (action spaces, legal-action masks,
    --data-parallel, evolved meta-parameters) and their presets; `rl algos ALGO --preset NAME`
    prints a preset's every setting."""
    from rl_cli.errors import UserError
    from rl_cli.listing import preset_toml, print_algos

    if algo is None:
        if preset is not None:
            raise UserError("--preset needs an algorithm: rl algos ALGO --preset NAME")
        print_algos()
        return
    click.echo(preset_toml(algo, preset), nl=False)


COMMANDS = (eval_, render_, plot, envs, algos)
