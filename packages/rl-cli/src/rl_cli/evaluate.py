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

import time
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from rl_cli.errors import UserError
from rl_cli.rundir import read_run_config
from rl_cli.stats import mean_ci95

# Episodes still running after this many steps count as unfinished (reported, never averaged).
# Every registered environment ends its episodes long before (time limits are at most 10^4).
MAX_STEPS = 100_000
MAX_EPISODES = 1_000_000  # episodes per member: all members' episodes are held in memory at once
PGX_OPPONENTS = ("random", "greedy")


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
    opponent: str | None  # pgx games: the opponent the agents played
    deterministic: bool
    episodes: int
    members: list[str]
    returns: np.ndarray  # float [M, N], undiscounted return of each episode (NaN: unfinished)
    lengths: np.ndarray  # int [M, N]
    compile_seconds: float
    run_seconds: float

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
        """Per member: the share of episodes won (return > 0), drawn (= 0) and lost (< 0): the
        outcome of a pgx game (+1 win, -1 loss, 0 draw). Unfinished episodes count as none."""
        n = self.returns.shape[1]
        with np.errstate(invalid="ignore"):
            return {k: np.sum(f(self.returns), axis=1) / n for k, f in (
                ("win_rate", lambda r: r > 0), ("draw_rate", lambda r: r == 0),
                ("loss_rate", lambda r: r < 0))}

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
            "overall_mean_return": _num(mean), "overall_ci95": _num(ci),
            "returns": [_nums(r) for r in self.returns],
            "compile_seconds": self.compile_seconds, "run_seconds": self.run_seconds,
        }
        if self.opponent is not None:
            out.update({k: v.tolist() for k, v in self.outcome_rates().items()})
        return out


def _num(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def _nums(xs: Any) -> list[float | None]:
    return [_num(x) for x in np.asarray(xs, np.float64)]


def read_record(path: Path) -> dict[str, Any]:
    """`config.json` of a finished run directory, or a UserError saying what is missing."""
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
    a pgx game `opponent` ('random' by default) replaces the training opponent's settings (a
    mixed opponent's greedy share, a move limit), so whole games are played against it; for any
    other environment an opponent is a UserError."""
    record = read_record(Path(run_dir))
    target = env_id or record["env"]
    kwargs = None  # the run's own environment arguments
    if target.startswith("pgx/"):
        opponent = opponent or "random"
        kwargs = {k: v for k, v in (record.get("env_kwargs") or {}).items()
                  if k not in ("opponent", "greedy_prob", "max_moves")} | {"opponent": opponent}
    elif opponent is not None:
        raise UserError(f"--opponent is for two-player pgx games; {target} has no opponent "
                        "(drop --opponent)")
    run = load_agent(run_dir, env_id, kwargs)
    if opponent is not None and getattr(run.env, "num_players", 1) < 2:
        raise UserError(f"{target} is a single-player game: there is no opponent to play")
    return run, opponent


def acting_env(env: Any, n: int) -> Any:
    """`n` copies of `env` stepped together (no auto-reset), Box actions clipped into the bounds
    as in training (`ClipAction`)."""
    from rl_core import Box, ClipAction, VectorEnv

    venv: Any = VectorEnv(env, n)
    return ClipAction(venv) if isinstance(env.action_space, Box) else venv


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
    )


class Played(NamedTuple):
    returns: np.ndarray  # float [M, N], NaN for an episode unfinished after MAX_STEPS
    lengths: np.ndarray  # int [M, N]
    compile_seconds: float
    run_seconds: float


def play_episodes(env: Any, policy: Any, agents: Any, episodes: int, seed: int = 0,
                  deterministic: bool = True, compiled: Any = None) -> Played:
    """`episodes` whole episodes of `env` for every member of `agents` (leading `[M]` axis), in
    one compiled program (members vmapped; all play the same environment randomness).
    `compiled`: that program compiled beforehand by `compile_play` with the same arguments
    (for agents shaped like these), used unless the agents turn out not to fit it."""
    if compiled is not None:
        try:
            return compiled(agents)
        except (TypeError, ValueError):  # compiled for other shapes or types: compile here
            pass
    t0 = time.perf_counter()
    play = compile_play(env, policy, agents, episodes, seed, deterministic)
    compile_seconds = time.perf_counter() - t0
    return play(agents)._replace(compile_seconds=compile_seconds)


def compile_play(env: Any, policy: Any, agents_like: Any, episodes: int, seed: int = 0,
                 deterministic: bool = True) -> Any:
    """`agents -> Played`, compiled once for agents shaped like `agents_like` (for evaluations
    repeated during training: every call plays the same `episodes` episodes, from `seed`)."""
    import jax

    play = jax.jit(jax.vmap(play_fn(env, policy, episodes, deterministic), in_axes=(0, None)))
    key = jax.random.PRNGKey(seed)
    compiled = play.lower(agents_like, key).compile()

    def run(agents: Any) -> Played:
        t0 = time.perf_counter()
        returns, lengths, done = jax.block_until_ready(compiled(agents, key))
        return Played(np.where(np.asarray(done), np.asarray(returns, np.float64), np.nan),
                      np.asarray(lengths), 0.0, time.perf_counter() - t0)

    return run


def play_fn(env: Any, policy: Any, episodes: int, deterministic: bool) -> Any:
    """`(agent, key) -> (returns [N], lengths [N], finished [N])` for one member: `episodes`
    episodes of `env` stepped together until every one has ended (an episode's return and length
    stop counting when it ends), acting with the policy (`rl_core.policy_step`: a policy with
    memory carries its state from step to step of each episode)."""
    import jax
    import jax.numpy as jnp

    from rl_core import initial_policy_state, policy_step

    venv = acting_env(env, episodes)

    def play(agent: Any, key: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
        k_reset, key = jax.random.split(key)
        state, ts = venv.reset(k_reset)

        def cond(c):
            return ~jnp.all(c[2]) & (c[5] < MAX_STEPS)

        def body(c):
            state, ts, done, ret, length, t, key, memory = c
            key, k_act, k_step = jax.random.split(key, 3)
            # No auto-reset: every episode runs from the first step on, so no state is reset.
            action, _, memory = policy_step(
                policy, agent, memory, ts.observation, jnp.zeros((episodes,), jnp.bool_),
                policy.noise(k_act, (episodes,)), deterministic, ts.info.get("action_mask"))
            state, ts = venv.step(state, action, k_step)
            live = ~done
            ret = ret + jnp.where(live, ts.reward, 0.0)
            length = length + live.astype(jnp.int32)
            done = done | ts.terminated | ts.truncated
            return state, ts, done, ret, length, t + 1, key, memory

        zeros = jnp.zeros((episodes,), jnp.float32)
        init = (state, ts, zeros.astype(jnp.bool_), zeros, zeros.astype(jnp.int32),
                jnp.zeros((), jnp.int32), key, initial_policy_state(policy, episodes))
        _, _, done, ret, length, _, _, _ = jax.lax.while_loop(cond, body, init)
        return ret, length, done

    return play


def eval_table(res: EvalResult) -> Any:
    """The console summary: one row per member, then the mean over members."""
    from rich.table import Table

    vs = f" vs {res.opponent}" if res.opponent else ""
    mode = "greedy" if res.deterministic else "stochastic"
    table = Table(title=f"{res.algo} on {res.env_id}{vs}: {res.episodes} episodes per member, "
                        f"{mode} policy", title_justify="left")
    cols = ["member", "mean return", "95% CI", "mean length"]
    rates = res.outcome_rates() if res.opponent else {}
    cols += ["win", "draw", "loss"] if rates else []
    for col in cols:
        table.add_column(col, justify="left" if col == "member" else "right")
    for i, name in enumerate(res.members):
        row = [name, f"{res.member_means[i]:.3f}", f"±{res.member_ci95[i]:.3f}",
               f"{np.mean(res.lengths[i]):.1f}"]
        row += [f"{rates[k][i]:.1%}" for k in ("win_rate", "draw_rate", "loss_rate")] if rates \
            else []
        table.add_row(*row)
    table.add_section()
    mean, ci = res.overall
    row = ["mean", f"{mean:.3f}", f"±{ci:.3f}", f"{np.mean(res.lengths):.1f}"]
    row += [f"{np.mean(rates[k]):.1%}" for k in ("win_rate", "draw_rate", "loss_rate")] if rates \
        else []
    table.add_row(*row)
    unfinished = (~res.finished).sum(axis=1)
    caption = f"compile {res.compile_seconds:.1f} s, play {res.run_seconds:.1f} s"
    if np.any(unfinished):
        caption = f"unfinished episodes per member: {unfinished.tolist()}; " + caption
    table.caption = caption
    return table
