"""`rl eval`: a trained run's agents play whole episodes on a fresh environment (any backend,
every algorithm), greedily unless asked to sample, and report each member's mean return with a
95% confidence interval; on a two-player pgx game also wins, draws and losses against an
opponent.

    from rl_cli.evaluate import evaluate, load_agent
    res = evaluate("runs/ppo-gymnax_CartPole-v1-...", episodes=100)
    res.member_means, res.member_ci95    # [M] each
    run = load_agent("runs/ppo-...")     # the policy, the agents, the config, the environment

A run directory holds `config.json` (algorithm, environment, config) and `params.eqx` (every
member's agent: its parameters and, when training normalised observations, their statistics;
leading `[M]` axis). The policy is rebuilt from the config (`make_policy`, the acting path the
training rollout used), the agents are loaded into its `agent_like`, and every member plays the
same `episodes` episodes (same environment randomness) in one compiled program: a member's
episodes run as a batch (no auto-reset) until every one has ended. Box actions are clipped into
the bounds at the environment, as in training (`ClipAction`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from rl_cli.errors import UserError
from rl_cli.play import play_episodes
from rl_cli.rundir import check_not_training, read_run_config
from rl_cli.stats import (
    GAME_OUTCOMES,
    finite_or_none,
    game_outcome_rates,
    mean_ci95,
    wilson_ci95,
)

MAX_EPISODES = 1_000_000  # episodes per member: all members' episodes are held in memory at once


class LoadedRun(NamedTuple):
    """A run's agents, ready to act: `policy.act(member(i), observations, noise, deterministic,
    mask)` for `[N]` raw observations of `env` (see `rl_core.Policy`)."""

    run_dir: Path
    algo: str
    env_id: str
    env_kwargs: dict[str, Any]
    config: Any
    members: list[str]
    agents: Any  # rl_core.Agent, leading [M] axis
    policy: Any  # rl_core.Policy
    env: Any

    def member(self, i: int) -> Any:
        """Member `i`'s agent (no member axis)."""
        import jax

        return jax.tree.map(lambda x: x[i], self.agents)


class EvalResult(NamedTuple):
    run_dir: str
    algo: str
    env_id: str
    opponent: str | None  # games with built-in opponents: the one the agents played
    deterministic: bool
    episodes: int
    members: list[str]
    returns: np.ndarray  # float [M, N], undiscounted return of each episode (NaN: unfinished)
    lengths: np.ndarray  # int [M, N]
    compile_seconds: float
    run_seconds: float
    agents: int = 1  # a multi-agent environment's: each return is its agents' team return
    won: np.ndarray | None = None  # bool [M, N] where the environment reports wins (SMAX)

    def win_rates(self) -> tuple[np.ndarray, np.ndarray]:
        """Per member: the share of episodes won, and its Wilson 95% interval `[M, 2]`, where
        the environment reports wins (`info["won"]`)."""
        assert self.won is not None
        n = self.won.shape[1]
        return (self.won.mean(axis=1),
                np.array([wilson_ci95(int(w.sum()), n) for w in self.won]))

    @property
    def finished(self) -> np.ndarray:
        return np.isfinite(self.returns)

    @property
    def member_means(self) -> np.ndarray:
        return np.array([mean_ci95(r)[0] for r in self.returns])

    @property
    def member_ci95(self) -> np.ndarray:
        return np.array([mean_ci95(r)[1] for r in self.returns])

    @property
    def overall(self) -> tuple[float, float]:
        """Mean over members of their mean returns, and the 95% CI over members."""
        return mean_ci95(self.member_means)

    def outcome_rates(self) -> dict[str, np.ndarray]:
        """Per member: the share of episodes won, drawn and lost (`game_outcome_rates`)."""
        return game_outcome_rates(self.returns)

    def as_dict(self) -> dict[str, Any]:
        mean, ci = self.overall
        out: dict[str, Any] = {
            "run_dir": self.run_dir, "algo": self.algo, "env": self.env_id,
            "opponent": self.opponent,
            "policy": "greedy" if self.deterministic else "stochastic",
            "episodes": self.episodes, "members": self.members,
            "mean_return": _nums(self.member_means), "ci95": _nums(self.member_ci95),
            "mean_length": _nums(np.mean(self.lengths, axis=1)),
            "unfinished": (~self.finished).sum(axis=1).tolist(),
            "overall_mean_return": finite_or_none(mean), "overall_ci95": finite_or_none(ci),
            "returns": [_nums(r) for r in self.returns],
            "compile_seconds": self.compile_seconds, "run_seconds": self.run_seconds,
            "agents": self.agents,
        }
        if self.opponent is not None:
            out.update({k: v.tolist() for k, v in self.outcome_rates().items()})
        if self.won is not None:
            rates, bounds = self.win_rates()
            out.update({"win_rate": rates.tolist(), "win_rate_ci95": bounds.tolist()})
        return out


def _nums(xs: Any) -> list[float | None]:
    return [finite_or_none(x) for x in np.asarray(xs, np.float64)]


def read_record(path: Path) -> dict[str, Any]:
    """`config.json` of a finished run directory, or a UserError saying what is missing."""
    if path.is_dir():
        check_not_training(path)
    return read_run_config(path, ("params.eqx",),
                           "it is not a finished `rl run` directory (runs save config.json at "
                           "the start and params.eqx at the end)")


def load_agent(run_dir: str | Path, env_id: str | None = None,
               env_kwargs: dict[str, Any] | None = None) -> LoadedRun:
    """A finished run's agents with the policy that acts with them: the config from
    `config.json`, the environment (the run's, or `env_id` with the same spaces, built with the
    run's keyword arguments, or with `env_kwargs` instead when given), `make_policy(env,
    config)`, and every member's `Agent` from `params.eqx`. A directory that is not a finished
    run, or an environment with other spaces, is a UserError saying what is wrong."""
    import equinox as eqx
    import jax

    import rl_algos
    import rl_envs

    path = Path(run_dir)
    record = read_record(path)
    algo, trained_id, fields = record["algo"], record["env"], record["config"]
    config_path = path / "config.json"
    try:
        if not isinstance(record["seeds"], list):
            raise TypeError(f"its 'seeds' must be a list of integers, got {record['seeds']!r}")
        members = [f"seed_{int(s)}" for s in record["seeds"]]
        trained_kwargs = dict(record.get("env_kwargs") or {})
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
    kwargs = trained_kwargs if env_kwargs is None else dict(env_kwargs)
    env = rl_envs.make(env_id or trained_id, **kwargs)
    if env_id is not None and env_id != trained_id:
        trained = rl_envs.make(trained_id, **trained_kwargs)
        if (_shape(env.observation_space) != _shape(trained.observation_space)
                or env.action_space != trained.action_space):
            raise UserError(f"the run's agents were trained on {trained_id} "
                            f"({trained.observation_space}, {trained.action_space}); {env_id} "
                            f"has other spaces ({env.observation_space}, {env.action_space})")
    try:
        policy = spec.make_policy(env, config)
    except ValueError as e:
        raise UserError(str(e)) from None
    like = jax.tree.map(lambda s: jax.ShapeDtypeStruct((len(members), *s.shape), s.dtype),
                        policy.agent_like)
    try:
        agents = eqx.tree_deserialise_leaves(path / "params.eqx", like)
    except Exception as e:  # a truncated or foreign file: say so in one line
        raise UserError(f"{path / 'params.eqx'} does not hold this run's agents "
                        f"({type(e).__name__}: {e})") from None
    return LoadedRun(path, algo, env_id or trained_id, kwargs, config, members, agents, policy,
                     env)


def _shape(space: Any) -> Any:
    import jax

    return [tuple(s.shape) for s in jax.tree.leaves(
        space, is_leaf=lambda s: hasattr(s, "shape"))]


def load_for_play(run_dir: str | Path, env_id: str | None,
                  opponent: str | None) -> tuple[LoadedRun, str | None]:
    """The run's agents on the environment they will play (`load_agent`), and the opponent: on
    a game with built-in opponents (`rl_envs.against`, e.g. pgx's) `opponent` (the adapter's
    default when None) replaces the training opponent's settings, so whole games are played
    against it; for any other environment an opponent is a UserError."""
    import rl_envs

    record = read_record(Path(run_dir))
    target = env_id or record["env"]
    kwargs = None  # the run's own environment arguments
    try:
        played = rl_envs.against(target, record.get("env_kwargs") or {}, opponent)
    except rl_envs.EnvError as e:
        raise UserError(str(e)) from None
    if played is not None:
        kwargs, opponent = played
    elif opponent is not None:
        raise UserError(f"--opponent is for two-player games with built-in opponents; {target} "
                        "has none (drop --opponent)")
    run = load_agent(run_dir, env_id, kwargs)
    if opponent is not None and getattr(run.env, "num_players", 1) < 2:
        raise UserError(f"{target} is a single-player game: there is no opponent to play")
    return run, opponent


def evaluate(run_dir: str | Path, episodes: int = 100, seed: int = 0,
             env_id: str | None = None, stochastic: bool = False,
             opponent: str | None = None) -> EvalResult:
    """Every member of the run plays `episodes` episodes on `env_id` (default: the run's
    environment; another id must have the same spaces), greedily unless `stochastic`. On a pgx
    game, `opponent` ('random' by default, or 'greedy') is the player it faces."""

    if not 1 <= episodes <= MAX_EPISODES:
        raise UserError(f"--episodes must be between 1 and {MAX_EPISODES:,} (the episodes of all "
                        f"members are held in memory at once), got {episodes:,}")
    run, opponent = load_for_play(run_dir, env_id, opponent)
    played = play_episodes(run.env, run.policy, run.agents, episodes, seed, not stochastic)
    return EvalResult(
        run_dir=str(run.run_dir), algo=run.algo, env_id=run.env_id, opponent=opponent,
        deterministic=not stochastic, episodes=episodes, members=run.members,
        returns=played.returns, lengths=played.lengths,
        compile_seconds=played.compile_seconds, run_seconds=played.run_seconds,
        agents=getattr(run.env, "num_agents", None) or 1, won=played.won,
    )


def eval_table(res: EvalResult) -> Any:
    """The console summary: one row per member, then the mean over members."""
    from rich.table import Table

    vs = f" vs {res.opponent}" if res.opponent else ""
    mode = "greedy" if res.deterministic else "stochastic"
    table = Table(title=f"{res.algo} on {res.env_id}{vs}: {res.episodes} episodes per member, "
                        f"{mode} policy", title_justify="left")
    cols = ["member", "mean team return" if res.agents > 1 else "mean return", "95% CI",
            "mean length"]
    rates = res.outcome_rates() if res.opponent else {}
    cols += ["win", "draw", "loss"] if rates else []
    won = res.win_rates() if res.won is not None else None
    cols += ["won (95% CI)"] if won is not None else []
    for col in cols:
        table.add_column(col, justify="left" if col == "member" else "right")
    for i, name in enumerate(res.members):
        row = [name, f"{res.member_means[i]:.3f}", f"±{res.member_ci95[i]:.3f}",
               f"{np.mean(res.lengths[i]):.1f}"]
        row += [f"{rates[k][i]:.1%}" for k in GAME_OUTCOMES] if rates \
            else []
        if won is not None:
            row.append(f"{won[0][i]:.1%} ({won[1][i, 0]:.0%}–{won[1][i, 1]:.0%})")
        table.add_row(*row)
    table.add_section()
    mean, ci = res.overall
    row = ["mean", f"{mean:.3f}", f"±{ci:.3f}", f"{np.mean(res.lengths):.1f}"]
    row += [f"{np.mean(rates[k]):.1%}" for k in GAME_OUTCOMES] if rates \
        else []
    if won is not None:
        row.append(f"{np.mean(won[0]):.1%}")
    table.add_row(*row)
    unfinished = (~res.finished).sum(axis=1)
    caption = f"compile {res.compile_seconds:.1f} s, play {res.run_seconds:.1f} s"
    if np.any(unfinished):
        caption = f"unfinished episodes per member: {unfinished.tolist()}; " + caption
    table.caption = caption
    return table
