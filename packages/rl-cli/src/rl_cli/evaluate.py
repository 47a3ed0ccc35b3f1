"""`rl eval`: plays a trained run's agents against a built-in opponent and counts wins, draws and
losses per member.

    from rl_cli.evaluate import evaluate
    res = evaluate("runs/pqn-pgx_connect_four-...", num_games=1000, opponent="greedy")
    res.win_rate            # [M], one entry per member (seed) of the run

A run directory holds `config.json` (algorithm, environment, config) and `params.eqx` (every
member's agent: its parameters and, when training normalised observations, their statistics;
leading `[M]` axis); the policy is rebuilt from the config (`make_policy`), the agents loaded,
and each member plays the same `num_games` games (same seats, same opponent randomness) in one
compiled program: the games of a member run as a batch (no auto-reset) until
every one has ended. A game's outcome is the sign of the agent's return (+1 win, -1 loss, 0 draw
in the pgx board games). Agents act greedily (the legal action of highest probability or Q-value)
unless `stochastic=True`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from rl_cli.errors import UserError

# Games still running after this many agent moves count as unfinished (reported, never as a
# win/draw/loss). Every pgx game ends long before.
MAX_MOVES = 10_000
MAX_GAMES = 1_000_000  # games per member


class LoadedRun(NamedTuple):
    run_dir: Path
    algo: str
    env_id: str
    env_kwargs: dict[str, Any]
    config: Any
    members: list[str]
    agents: Any  # rl_core.Agent, leading [M] axis


class EvalResult(NamedTuple):
    run_dir: str
    env_id: str
    opponent: str
    num_games: int
    members: list[str]
    wins: np.ndarray  # int [M]
    draws: np.ndarray
    losses: np.ndarray
    unfinished: np.ndarray
    mean_return: np.ndarray  # float [M]
    compile_seconds: float
    run_seconds: float

    @property
    def win_rate(self) -> np.ndarray:
        return self.wins / self.num_games

    @property
    def draw_rate(self) -> np.ndarray:
        return self.draws / self.num_games

    @property
    def loss_rate(self) -> np.ndarray:
        return self.losses / self.num_games

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_dir": self.run_dir, "env": self.env_id, "opponent": self.opponent,
            "num_games": self.num_games, "members": self.members,
            "win_rate": self.win_rate.tolist(), "draw_rate": self.draw_rate.tolist(),
            "loss_rate": self.loss_rate.tolist(), "unfinished": self.unfinished.tolist(),
            "mean_return": self.mean_return.tolist(),
            "compile_seconds": self.compile_seconds, "run_seconds": self.run_seconds,
        }


def read_record(path: Path) -> dict[str, Any]:
    """`config.json` of a finished run directory, or a UserError saying what is missing."""
    if not path.is_dir():
        raise UserError(f"run directory '{path}' does not exist; pass a directory that "
                        "`rl run` wrote (runs/<algo>-<env>-<time>)")
    for name in ("config.json", "params.eqx"):
        if not (path / name).is_file():
            raise UserError(f"'{path}' has no {name}: it is not a finished `rl run` directory "
                            "(runs save config.json at the start and params.eqx at the end)")
    try:
        record = json.loads((path / "config.json").read_text())
        for key in ("algo", "env", "config", "seeds"):
            record[key]  # noqa: B018  (presence check)
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise UserError(f"{path / 'config.json'} is not a config written by `rl run` "
                        f"(missing or unreadable: {e})") from None
    return dict(record)


def load_run(run_dir: str | Path) -> LoadedRun:
    """Rebuilds a run's agents from `config.json` and loads `params.eqx`; a directory that is
    not a finished run is a UserError saying what is missing."""
    import equinox as eqx
    import jax

    import rl_algos
    import rl_envs

    path = Path(run_dir)
    record = read_record(path)
    algo, env_id, fields = record["algo"], record["env"], record["config"]
    config_path = path / "config.json"
    try:
        if not isinstance(record["seeds"], list):
            raise TypeError(f"its 'seeds' must be a list of integers, got {record['seeds']!r}")
        members = [f"seed_{int(s)}" for s in record["seeds"]]
        env_kwargs = dict(record.get("env_kwargs") or {})
        if not isinstance(fields, dict):
            raise TypeError("'config' is not a mapping")
    except (TypeError, ValueError) as e:
        raise UserError(f"{config_path} is not a config written by `rl run` ({e})") from None
    spec = rl_algos.get(algo)
    try:
        config = spec.config_cls(**{k: tuple(v) if isinstance(v, list) else v
                                    for k, v in fields.items()})
        config.validate()
    except (TypeError, ValueError) as e:
        raise UserError(f"{config_path}: its config does not fit {algo} ({e})") from None
    env = rl_envs.make(env_id, **env_kwargs)
    policy = _policy(spec, env, config)
    like = jax.tree.map(lambda s: jax.ShapeDtypeStruct((len(members), *s.shape), s.dtype),
                        policy.agent_like)
    try:
        agents = eqx.tree_deserialise_leaves(path / "params.eqx", like)
    except Exception as e:  # a truncated or foreign file: say so in one line
        raise UserError(f"{path / 'params.eqx'} does not hold this run's agents "
                        f"({type(e).__name__}: {e})") from None
    return LoadedRun(path, algo, env_id, env_kwargs, config, members, agents)


def _policy(spec: Any, env: Any, config: Any) -> Any:
    try:
        return spec.make_policy(env, config)
    except ValueError as e:
        raise UserError(str(e)) from None


def evaluate(run_dir: str | Path, num_games: int = 1000, opponent: str = "random",
             seed: int = 0, env_id: str | None = None, stochastic: bool = False) -> EvalResult:
    """Every member of the run plays `num_games` games against `opponent` on `env_id` (default:
    the run's environment; another id must have the same spaces)."""
    import jax
    import jax.numpy as jnp

    import rl_algos
    import rl_envs

    if not 1 <= num_games <= MAX_GAMES:
        raise UserError(f"--games must be between 1 and {MAX_GAMES:,} (the games of all members "
                        f"are held in memory at once), got {num_games:,}")
    env_id = env_id or read_record(Path(run_dir))["env"]
    if not env_id.startswith("pgx/"):
        raise UserError(f"rl eval plays pgx games against an opponent, but the environment is "
                        f"'{env_id}'; evaluate a run trained on a pgx/ game (or pass --env)")
    run = load_run(run_dir)
    kwargs = {k: v for k, v in run.env_kwargs.items()
              if k not in ("opponent", "greedy_prob", "max_moves")}
    env = rl_envs.make(env_id, opponent=opponent, **kwargs)
    if getattr(env, "num_players", 1) < 2:
        raise UserError(f"{env_id} is a single-player game: there is no opponent to play")
    trained = rl_envs.make(run.env_id, **run.env_kwargs)
    if (env.observation_space.shape != trained.observation_space.shape
            or env.action_space != trained.action_space):
        raise UserError(f"the run's agents were trained on {run.env_id} "
                        f"({trained.observation_space}, {trained.action_space}); {env_id} has "
                        f"other spaces ({env.observation_space}, {env.action_space})")
    policy = _policy(rl_algos.get(run.algo), env, run.config)
    play = jax.jit(jax.vmap(_play_fn(env, policy, num_games, greedy=not stochastic),
                            in_axes=(0, None)))
    key = jax.random.PRNGKey(seed)
    t0 = time.perf_counter()
    compiled = play.lower(run.agents, key).compile()
    compile_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    returns, done = jax.block_until_ready(compiled(run.agents, key))
    run_seconds = time.perf_counter() - t0
    returns, done = np.asarray(returns), np.asarray(done)  # [M, G]
    return EvalResult(
        run_dir=str(run.run_dir), env_id=env_id, opponent=opponent, num_games=num_games,
        members=run.members,
        wins=np.sum(done & (returns > 0), axis=1), draws=np.sum(done & (returns == 0), axis=1),
        losses=np.sum(done & (returns < 0), axis=1), unfinished=np.sum(~done, axis=1),
        mean_return=np.asarray(jnp.mean(returns, axis=1)),
        compile_seconds=compile_seconds, run_seconds=run_seconds,
    )


def _play_fn(env: Any, policy: Any, num_games: int, greedy: bool) -> Any:
    """`(agent, key) -> (returns [G], finished [G])` for one member: `num_games` games stepped
    together until all have ended (finished games are no longer counted)."""
    import jax
    import jax.numpy as jnp

    from rl_core import VectorEnv

    venv = VectorEnv(env, num_games)

    def play(agent: Any, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        k_reset, key = jax.random.split(key)
        state, ts = venv.reset(k_reset)
        zeros = jnp.zeros((num_games,), jnp.float32)

        def cond(c):
            _, _, done, _, t, _ = c
            return ~jnp.all(done) & (t < MAX_MOVES)

        def body(c):
            state, ts, done, ret, t, key = c
            key, k_act, k_step = jax.random.split(key, 3)
            action, _ = policy.act(agent, ts.observation, policy.noise(k_act, (num_games,)),
                                   greedy, ts.info.get("action_mask"))
            state, ts = venv.step(state, action, k_step)
            ret = ret + jnp.where(done, 0.0, ts.reward)
            done = done | ts.terminated | ts.truncated
            return state, ts, done, ret, t + 1, key

        init = (state, ts, zeros.astype(jnp.bool_), zeros, jnp.zeros((), jnp.int32), key)
        _, _, done, ret, _, _ = jax.lax.while_loop(cond, body, init)
        return ret, done

    return play


def eval_table(res: EvalResult) -> Any:
    """The console summary: one row per member, then the mean over members."""
    from rich.table import Table

    table = Table(title=f"{res.env_id} vs {res.opponent}: {res.num_games} games per member",
                  title_justify="left")
    for col in ("member", "win", "draw", "loss", "mean return"):
        table.add_column(col, justify="left" if col == "member" else "right")
    for i, name in enumerate(res.members):
        table.add_row(name, f"{res.win_rate[i]:.1%}", f"{res.draw_rate[i]:.1%}",
                      f"{res.loss_rate[i]:.1%}", f"{res.mean_return[i]:+.3f}")
    table.add_section()
    table.add_row("mean", f"{np.mean(res.win_rate):.1%}", f"{np.mean(res.draw_rate):.1%}",
                  f"{np.mean(res.loss_rate):.1%}", f"{np.mean(res.mean_return):+.3f}")
    if np.any(res.unfinished):
        table.caption = f"unfinished games per member: {res.unfinished.tolist()}"
    table.caption = ((table.caption + "; ") if table.caption else "") + (
        f"compile {res.compile_seconds:.1f} s, play {res.run_seconds:.1f} s")
    return table
