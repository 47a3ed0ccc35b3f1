"""`rl arena`: round-robin matches on one two-player game between trained runs' agents (every
member of each run) and built-in players (random, greedy, mcts:N); each pair plays `--games`
games, half with each player first. It prints every match's win/draw/loss rates with Wilson 95%
intervals and a rating table (Bradley–Terry on the Elo scale, random = 0 when random plays),
and writes `arena.json` and `arena.png`.

The game's match engine comes from its adapter (`rl_envs.arena`); agents act greedily (the most
probable or highest-valued legal move) on the mover's observation, as in `rl eval`; a planner's
(AlphaZero's) members also enter a second time, playing with their search (`<member>+search`
with the run's own simulation count, `<member>+searchN` with `--search-simulations N`).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, NamedTuple

import click
import numpy as np

from rl_cli.errors import UserError


class Entrant(NamedTuple):
    name: str
    player: Any  # rl_envs.pgx_match.Player


def agent_player(policy: Any, agent: Any) -> Any:
    """A trained agent as a match player: its greedy action on one observation."""

    def act(state: Any, obs: Any, legal: Any, key: Any) -> Any:
        del state
        return policy.act(agent, obs[None], policy.noise(key, (1,)), True, legal[None])[0][0]

    return act


def search_entrants(run: Any, simulations: int | None) -> list[Entrant]:
    """A planner's members also play with search (`AlgoSpec.make_planner`; `simulations` per
    move, the run's own count when None), named `<member>+search` (`+searchN` with N given);
    none for other algorithms."""
    import rl_algos

    make_planner = rl_algos.get(run.algo).make_planner
    if make_planner is None:
        return []
    plan = make_planner(run.env, run.config, simulations)

    def player(agent: Any) -> Any:
        return lambda state, obs, legal, key: plan(agent, state, key)

    tag = "+search" if simulations is None else f"+search{simulations}"
    return [Entrant(f"{run.run_dir.name}/{m}{tag}", player(run.member(i)))
            for i, m in enumerate(run.members)]


def entrants(run_dirs: tuple[Path, ...], opponents: list[str] | None, env_id: str | None,
             simulations: int | None = None) -> tuple[str, Any, list[Entrant]]:
    """The game (from the runs, or `env_id` when none is given), its match engine, and every
    entrant: each member of each run, then each built-in player. One line of UserError for runs
    of different games, a game without a match engine, policies with memory, or fewer than two
    entrants."""
    import rl_envs
    from rl_cli.evaluate import load_agent, read_record

    games = sorted({read_record(Path(d))["env"] for d in run_dirs} | (
        {env_id} if env_id else set()))
    if not games:
        raise UserError("name a game: give trained runs (RUN_DIR...) or --env, e.g. "
                        "--env pgx/connect_four")
    if len(games) > 1:
        raise UserError(f"an arena plays one game; these are several: {', '.join(games)}")
    engine = rl_envs.arena(games[0])
    if engine is None:
        raise UserError(f"rl arena plays two-player board games whose adapter has a match engine "
                        f"(pgx); {games[0]} has none")
    players, planners = [], 0
    for run in (load_agent(d) for d in run_dirs):
        if run.policy.step is not None:
            raise UserError(f"{run.run_dir}: its {run.algo} policy has memory; rl arena plays "
                            "feed-forward agents")
        players += [Entrant(f"{run.run_dir.name}/{m}", agent_player(run.policy, run.member(i)))
                    for i, m in enumerate(run.members)]
        searching = search_entrants(run, simulations)
        planners += bool(searching)
        players += searching
    if simulations is not None and not planners:
        raise UserError("--search-simulations sets the search of planners' runs (alphazero); "
                        "none of these runs plans: drop it")
    names = engine.default_players() if opponents is None else opponents
    players += [Entrant(name, engine.builtin(name)) for name in names]
    names = [p.name for p in players]
    if len(set(names)) != len(names):
        raise UserError(f"each entrant plays once; named twice: "
                        f"{', '.join(sorted({n for n in names if names.count(n) > 1}))}")
    if len(players) < 2:
        raise UserError(f"an arena needs two entrants or more, got {', '.join(names) or 'none'}")
    return games[0], engine, players


def match_record(a: str, b: str, score: np.ndarray, first: np.ndarray,
                 finished: np.ndarray, seconds: float) -> dict[str, Any]:
    """One match from `a`'s side: counts of the finished games, their rates' Wilson 95%
    intervals; a game that never ended (`unfinished`) is in no count and no rating."""
    from rl_cli.stats import wilson_ci95

    done = score[finished]
    n = int(done.size)
    counts = {"wins": int(np.sum(done > 0)), "draws": int(np.sum(done == 0)),
              "losses": int(np.sum(done < 0))}
    record: dict[str, Any] = {"a": a, "b": b, "games": n, "a_first": int(np.sum(first)),
                              "unfinished": int(np.sum(~finished)), **counts,
                              "seconds": round(seconds, 2)}
    for key, k in counts.items():
        record[f"{key}_ci95"] = list(wilson_ci95(k, n))
    return record


# Games played at once, at most: a search player keeps a tree per game.
CHUNK = 1024


def play_match(engine: Any, a: Entrant, b: Entrant, games: int, key: Any,
               opening_moves: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`games` (even) games of `a` against `b`, in chunks of an even size of at most `CHUNK`
    (one compiled program), `a` first in exactly half, each opened by `opening_moves` random
    moves (shared by the pair of games that swaps the seats): score, a-moved-first, finished."""
    import jax

    chunks = -(-games // CHUNK)
    size = -(-games // chunks)
    size += size % 2
    program = jax.jit(lambda k: engine.play(a.player, b.player, size, k, opening_moves))
    parts = [jax.block_until_ready(program(jax.random.fold_in(key, c))) for c in range(chunks)]
    return tuple(np.concatenate([np.asarray(p[i]) for p in parts])[:games]  # type: ignore
                 for i in range(3))


def play_all(engine: Any, players: list[Entrant], games: int, seed: int,
             echo: Any, opening_moves: int = 0) -> list[dict[str, Any]]:
    """Every pair once, `games` games each (compiled per pair), in entrant order."""
    import jax

    records = []
    pairs = [(i, j) for i in range(len(players)) for j in range(i + 1, len(players))]
    for n, (i, j) in enumerate(pairs):
        a, b = players[i], players[j]
        key = jax.random.fold_in(jax.random.PRNGKey(seed), n)
        t0 = time.perf_counter()
        score, first, finished = play_match(engine, a, b, games, key, opening_moves)
        records.append(match_record(a.name, b.name, score, first, finished,
                                    time.perf_counter() - t0))
        r = records[-1]
        unfinished = f", {r['unfinished']} unfinished" if r["unfinished"] else ""
        echo(f"[{n + 1}/{len(pairs)}] {a.name} vs {b.name}: {r['wins']} won, {r['draws']} "
             f"drawn, {r['losses']} lost{unfinished} ({r['seconds']:.1f} s)")
    return records


def ratings(names: list[str], records: list[dict[str, Any]]) -> dict[str, float]:
    """Bradley–Terry ratings (Elo scale) anchored on random when it plays, else on the first
    entrant."""
    from rl_cli.stats import bradley_terry_elo

    index = {n: i for i, n in enumerate(names)}
    score, played = np.zeros((len(names),) * 2), np.zeros((len(names),) * 2)
    for r in records:
        i, j = index[r["a"]], index[r["b"]]
        points = r["wins"] + 0.5 * r["draws"]
        score[i, j], score[j, i] = points, r["games"] - points
        played[i, j] = played[j, i] = r["games"]
    elo = bradley_terry_elo(score, played, anchor=index.get("random", 0))
    return {n: round(float(e), 1) for n, e in zip(names, elo, strict=True)}


def tables(result: dict[str, Any]) -> list[Any]:
    """The console report: the matches, then the ratings, best first."""
    from rich.table import Table

    matches = Table(title=f"{result['game']}: {result['games_per_match']} games per match "
                          "(win / draw / loss %, Wilson 95% CI of the wins)")
    for col in ("a", "b", "W / D / L", "wins 95% CI"):
        matches.add_column(col, justify="left" if col in "ab" else "right", overflow="fold")
    for r in result["matches"]:
        rates = " / ".join(f"{100 * r[k] / r['games']:.1f}" for k in ("wins", "draws", "losses"))
        lo, hi = r["wins_ci95"]
        matches.add_row(r["a"], r["b"], rates, f"{100 * lo:.1f}-{100 * hi:.1f}")
    board = Table(title=f"ratings (Bradley-Terry, Elo scale, {result['anchor']} = 0)")
    board.add_column("entrant", overflow="fold")
    board.add_column("rating", justify="right")
    board.add_column("score %", justify="right")
    for name, elo in sorted(result["ratings"].items(), key=lambda kv: -kv[1]):
        mine = [(r["wins"] + 0.5 * r["draws"], r["games"]) if r["a"] == name else
                (r["losses"] + 0.5 * r["draws"], r["games"])
                for r in result["matches"] if name in (r["a"], r["b"])]
        pct = 100 * sum(p for p, _ in mine) / sum(g for _, g in mine)
        board.add_row(name, f"{elo:+.0f}", f"{pct:.1f}")
    return [matches, board]


def plot(result: dict[str, Any], out: Path) -> None:
    """The ratings as horizontal bars, best on top."""
    from rl_cli.plots import new_figure, save_figure

    items = sorted(result["ratings"].items(), key=lambda kv: kv[1])
    fig, ax = new_figure((6.0, 0.45 * len(items) + 1.2))
    ax.barh([n for n, _ in items], [e for _, e in items], color="tab:blue")
    ax.axvline(0.0, color="black", lw=0.8)
    ax.set_xlabel(f"rating (Elo scale, {result['anchor']} = 0)")
    ax.set_title(f"{result['game']}: {result['games_per_match']} games per match")
    save_figure(fig, out)


@click.command("arena")
@click.argument("run_dirs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--opponents", default=None,
              help="Built-in players, comma-separated: random, greedy, mcts:N (a search with N "
                   "simulations a move); default: random, and greedy where the game has it.")
@click.option("--games", default=100, show_default=True, type=int,
              help="Games per match, an even number: half with each player first.")
@click.option("--env", "env_id", default=None,
              help="The game when no run is given (e.g. pgx/connect_four).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seeds the games.")
@click.option("--search-simulations", type=int, default=None,
              help="Simulations a move for planners' (alphazero's) search players (default: "
                   "the run's own).")
@click.option("--opening-moves", default=0, show_default=True, type=int,
              help="Random moves opening every game, the same for the two games of a pair "
                   "(seats swapped): deterministic players then play varied games.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Directory for arena.json and arena.png (default: runs/arena-<game>-<time>).")
def arena(run_dirs: tuple[Path, ...], opponents: str | None, games: int, env_id: str | None,
          seed: int, search_simulations: int | None, opening_moves: int,
          out: Path | None) -> None:
    """Round-robin matches between runs' agents and built-in players on a two-player game:
    win/draw/loss with Wilson 95% intervals and Bradley-Terry ratings (random = 0)."""
    from rich.console import Console

    from rl_cli.resume import write_atomic

    if games < 2 or games % 2 or games > 1_000_000:
        raise UserError(f"--games must be an even number from 2 to 1,000,000 (half the games "
                        f"with each player first), got {games:,}")
    if search_simulations is not None and not 1 <= search_simulations <= 100_000:
        raise UserError(f"--search-simulations must be a number of simulations from 1 to "
                        f"100,000, got {search_simulations:,}")
    if not 0 <= opening_moves <= 100:
        raise UserError(f"--opening-moves must be a number of random opening moves from 0 to "
                        f"100, got {opening_moves:,}")
    names = None if opponents is None else [o.strip() for o in opponents.split(",") if o.strip()]
    game, engine, players = entrants(run_dirs, names, env_id, search_simulations)
    console = Console()
    records = play_all(engine, players, games, seed, console.print, opening_moves)
    anchor = "random" if "random" in [p.name for p in players] else players[0].name
    result = {"game": game, "games_per_match": games, "seed": seed,
              "opening_moves": opening_moves, "anchor": anchor,
              "entrants": [p.name for p in players], "matches": records,
              "ratings": ratings([p.name for p in players], records)}
    out = out or Path("runs") / f"arena-{game.replace('/', '_')}-{time.strftime('%Y%m%d-%H%M%S')}"
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / "arena.json", json.dumps(result, indent=2))
    plot(result, out / "arena.png")
    for table in tables(result):
        console.print(table)
    console.print(f"written to {out / 'arena.json'} and {out / 'arena.png'}")
