"""pgx behind the port: every game as a single-agent environment against a built-in opponent.

One port episode is one game. At reset the learning agent takes a uniformly random seat (first or
second player equally often in two-player games; any of the three in sparrow_mahjong) and the
opponents play until it is the agent's turn; each port `step` is one agent move followed by every
opponent move up to the agent's next turn (or the end of the game). The opponent is chosen at
construction:

* `opponent="random"` (default): uniform over the legal moves;
* `opponent="greedy"`: a one-move look-ahead player: it takes a winning move when one exists,
  else blocks a move with which the agent would win next, else plays a random legal move. Only
  for the games where that look-ahead is a cheap board check (tic_tac_toe, connect_four);
* `opponent="mixed"`: each game, greedy with probability `greedy_prob` (default 0.5), else
  random; a training curriculum against both;
* `opponent="mcts:N"`: Monte Carlo tree search with N simulations per move (mctx, the game as the
  model, a uniform prior, random playouts; `rl_envs.pgx_search`), for the two-player board games
  with perfect information and no chance (all but backgammon). Its strength grows with N;
* `opponent="self"`: self-play, the learner plays every seat (`rl_envs.pgx_selfplay`).

Single-player games (2048, the pgx MinAtar ports) have no opponent: only "random" (the default,
meaning none) is accepted for them.

How pgx's episode ends map onto the port:
* pgx games end by themselves (win, loss, draw, a game's own move limit such as chess's): that is
  `terminated`. pgx has no auto-reset; rl-core's `AutoReset` starts the next game and keeps the
  true final observation.
* pgx never truncates; with `max_moves=N` a game that reaches N agent moves without ending is
  `truncated` (never also `terminated`), so a learner bootstraps from its last position. pgx's own
  `truncated` flag (unused by the 2.6 games) would also map to `truncated`.
* an illegal agent move ends the game in pgx with -1 for the agent: `terminated`, reward -1. The
  legal-move mask is `info["action_mask"]` (bool `[num_actions]`, at reset too), so masked
  policies never pay it.
* the reward of a step is the agent's entry of pgx's per-player `rewards` (indexed by player id,
  not by "current player") summed over the agent's move and the opponents' replies: +1/-1/0 at the
  end of a board game, the game's own score in 2048 and the card games.

Observations are pgx's own planes seen from the agent's seat (also at the end of a game, when pgx's
`observation` is the other player's view), cast to float32; boolean planes are a Box in [0, 1].

Games left out, with the reason (pgx 2.6.0):
* bridge_bidding: `pgx.make` refuses it on purpose and it needs the DDS result tables downloaded
  from the web: not runnable offline.
* pgx's pretrained baseline opponents (`pgx.make_baseline_model`) download weights and need
  dm-haiku: not offered as opponents.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rl_core import Box, Discrete, TimeStep
from rl_envs._registry import EnvError

LIBRARY = "pgx"

# Family of each game: it selects the algorithms' default hyperparameters (presets).
_FAMILIES = {
    "board_game": [
        "tic_tac_toe", "connect_four", "othello", "hex", "go_9x9", "go_19x19", "chess",
        "gardner_chess", "shogi", "animal_shogi", "backgammon",
    ],
    "card_game": ["kuhn_poker", "leduc_holdem", "sparrow_mahjong"],
    "minatar": [
        "minatar-asterix", "minatar-breakout", "minatar-freeway", "minatar-seaquest",
        "minatar-space_invaders",
    ],
    "puzzle": ["2048"],
}
EXCLUDED = {
    "bridge_bidding": "pgx.make refuses it and its DDS tables are downloaded from the web",
}
ENV_NAMES: list[str] = [n for names in _FAMILIES.values() for n in names]
FAMILY: dict[str, str] = {n: fam for fam, names in _FAMILIES.items() for n in names}
OPPONENTS = ("random", "greedy", "mixed", "mcts:N", "self")
# The opponents a trained agent is judged against (`against`): fixed players, not a mixture.
JUDGES = ("random", "greedy", "mcts:N")
# Games the search opponent can play: deterministic, perfect information, two players.
SEARCHABLE = [n for n in _FAMILIES["board_game"] if n != "backgammon"]

# Games that can end before the agent's first move (an opponent's win on the first draws: 67 of
# 4000 sparrow_mahjong deals); their reset deals again. In the others nothing ends or scores
# before every player has moved, so the opponents' opening moves carry no reward.
_MAY_END_BEFORE_AGENT = {"sparrow_mahjong"}
# A pgx game never needs this many opponent moves in a row; the bound only guarantees that a
# broken game cannot hang a compiled loop.
_MAX_OPPONENT_MOVES = 1024


# ----------------------------------------------------------------------------------------------
# One-move look-ahead, on the board planes of tic_tac_toe and connect_four.


def has_line(board: jax.Array, k: int) -> jax.Array:
    """Whether the bool board `[H, W]` holds `k` in a row (row, column or diagonal)."""
    h, w = board.shape
    found = jnp.zeros((), jnp.bool_)
    for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
        rows, cols = h - (k - 1) * dr, w - (k - 1) * abs(dc)
        if rows <= 0 or cols <= 0:
            continue
        c0 = (k - 1) if dc < 0 else 0
        run = jnp.ones((rows, cols), jnp.bool_)
        for i in range(k):
            r, c = i * dr, c0 + i * dc
            run = run & board[r : r + rows, c : c + cols]
        found = found | jnp.any(run)
    return found


def _placements_cell(occupied: jax.Array) -> jax.Array:
    """tic_tac_toe: action a marks cell a (row-major): one-hot `[A, H, W]`."""
    h, w = occupied.shape
    return jnp.eye(h * w, dtype=jnp.bool_).reshape(h * w, h, w)


def _placements_drop(occupied: jax.Array) -> jax.Array:
    """connect_four: action c drops a stone to the lowest empty cell of column c (row 0 is the
    top): one-hot `[W, H, W]` (all False for a full column)."""
    h, w = occupied.shape
    filled = jnp.sum(occupied, axis=0)  # [W]
    row = h - 1 - filled  # landing row, -1 when full
    rows = jnp.arange(h)[None, :, None] == row[:, None, None]
    cols = jnp.arange(w)[None, None, :] == jnp.arange(w)[:, None, None]
    return rows & cols


class _LineGame(NamedTuple):
    placements: Callable[[jax.Array], jax.Array]
    k: int  # stones in a row that win


LOOKAHEAD = {
    "tic_tac_toe": _LineGame(_placements_cell, 3),
    "connect_four": _LineGame(_placements_drop, 4),
}


def winning_moves(game: str, own: jax.Array, other: jax.Array, legal: jax.Array) -> jax.Array:
    """bool `[A]`: the legal moves with which the owner of `own` (bool `[H, W]`) would complete a
    line at once, `other` being the other player's stones."""
    spec = LOOKAHEAD[game]
    place = spec.placements(own | other)  # [A, H, W]
    wins = jax.vmap(lambda p: has_line(own | p, spec.k))(place)
    return wins & legal & jnp.any(place, axis=(1, 2))


def greedy_move(game: str, obs: jax.Array, legal: jax.Array, key: jax.Array) -> jax.Array:
    """The greedy opponent's move from the mover's planes `obs [H, W, 2]` (plane 0 its own
    stones, plane 1 the other's): a win, else a block, else uniform over the legal moves."""
    own, other = obs[..., 0].astype(jnp.bool_), obs[..., 1].astype(jnp.bool_)
    win = winning_moves(game, own, other, legal)
    block = winning_moves(game, other, own, legal)
    choice = jnp.where(jnp.any(win), win, jnp.where(jnp.any(block), block, legal))
    return _uniform(choice, key)


def _uniform(mask: jax.Array, key: jax.Array) -> jax.Array:
    return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)


# ----------------------------------------------------------------------------------------------


class PgxState(NamedTuple):
    game: Any  # the pgx State
    agent: jax.Array  # int32 [], the agent's player id
    greedy: jax.Array  # bool [], this game's opponent is the greedy one
    moves: jax.Array  # int32 [], agent moves so far in this game


class PgxEnv:
    """One pgx game against a fixed opponent; see the module docstring."""

    def __init__(self, name: str, opponent: str = "random", greedy_prob: float = 0.5,
                 max_moves: int | None = None):
        import pgx

        if name in EXCLUDED:
            raise EnvError(f"pgx/{name} is not supported: {EXCLUDED[name]}.")
        simulations = search_simulations(opponent, f"pgx/{name}")
        if opponent == "self":  # its own environment class
            raise EnvError(f"pgx/{name}: self-play is built by rl_envs.make('pgx/{name}', "
                           "opponent='self').")
        if opponent not in OPPONENTS and simulations is None:
            raise EnvError(f"pgx/{name}: opponent must be one of {', '.join(OPPONENTS)}, "
                           f"got {opponent!r}.")
        if not isinstance(greedy_prob, int | float) or not 0.0 <= float(greedy_prob) <= 1.0:
            raise EnvError(f"pgx/{name}: greedy_prob must be a number in [0, 1], "
                           f"got {greedy_prob!r}.")
        if max_moves is not None and (not isinstance(max_moves, int | np.integer)
                                      or isinstance(max_moves, bool) or max_moves < 1):
            raise EnvError(f"pgx/{name}: max_moves must be a positive integer (or left out for "
                           f"no limit), got {max_moves!r}.")
        self.name = name
        self.family = FAMILY[name]
        self._env = pgx.make(name)
        self.num_players = int(self._env.num_players)
        if opponent != "random" and self.num_players == 1:
            raise EnvError(f"pgx/{name} is a single-player game: it has no opponent; drop "
                           f"opponent={opponent!r}.")
        if simulations is not None and name not in SEARCHABLE:
            raise EnvError(f"pgx/{name}: the search opponent plays the two-player board games "
                           f"without chance ({', '.join(SEARCHABLE)}); use opponent='random'.")
        if opponent in ("greedy", "mixed") and name not in LOOKAHEAD:
            raise EnvError(f"pgx/{name}: the greedy opponent exists for "
                           f"{', '.join(LOOKAHEAD)} only; use opponent='random'"
                           + (" or 'mcts:N'." if name in SEARCHABLE else "."))
        self.opponent = opponent
        self.simulations = simulations
        self.greedy_prob = ({"random": 0.0, "greedy": 1.0}.get(opponent, float(greedy_prob))
                            if simulations is None else 0.0)
        self.max_moves = None if max_moves is None else int(max_moves)
        probe = jax.eval_shape(self._env.init, jax.random.PRNGKey(0))
        obs = probe.observation
        bounded = obs.dtype == jnp.bool_
        self.observation_space = Box(0.0 if bounded else -np.inf, 1.0 if bounded else np.inf,
                                     tuple(obs.shape), jnp.float32)
        self.action_space = Discrete(int(probe.legal_action_mask.shape[0]))

    # -- opponents -----------------------------------------------------------------------------

    def _opponent_move(self, state: PgxState, key: jax.Array) -> Any:
        """One opponent move (the game's current player is not the agent)."""
        g = state.game
        k_move, k_step = jax.random.split(key)
        if self.simulations is not None:
            from rl_envs.pgx_search import mcts_move

            return self._env.step(g, mcts_move(self._env, g, k_move, self.simulations), k_step)
        action = _uniform(g.legal_action_mask, k_move)
        if self.greedy_prob > 0.0:
            smart = greedy_move(self.name, g.observation, g.legal_action_mask, k_move)
            action = jnp.where(state.greedy, smart, action)
        return self._env.step(g, action, k_step)

    def _play_opponents(self, state: PgxState, key: jax.Array) -> tuple[PgxState, jax.Array]:
        """Opponent moves until the agent is to move or the game is over; returns the state and
        the agent's reward summed over those moves."""
        if self.num_players == 1:
            return state, jnp.zeros((), jnp.float32)

        def cond(c):
            s, _, _, i = c
            return (~s.game.terminated & (s.game.current_player != s.agent)
                    & (i < _MAX_OPPONENT_MOVES))

        def body(c):
            s, reward, k, i = c
            k, k_move = jax.random.split(k)
            g = self._opponent_move(s, k_move)
            return s._replace(game=g), reward + g.rewards[s.agent], k, i + 1

        s, reward, _, _ = jax.lax.while_loop(
            cond, body, (state, jnp.zeros((), jnp.float32), key, jnp.zeros((), jnp.int32)))
        return s, reward

    # -- the port ------------------------------------------------------------------------------

    def _observe(self, state: PgxState) -> jax.Array:
        """The agent's view: pgx's `observation` is the current player's, which is the agent's
        on its turn; at the end of a game it may be the other player's."""
        g = state.game
        if self.num_players == 1:
            obs = g.observation
        else:
            mine = self._env._observe(g, state.agent)  # pgx's per-seat view (Env.observe warns)
            obs = jnp.where(g.current_player == state.agent, g.observation, mine)
        return jnp.asarray(obs, jnp.float32)

    def _timestep(self, state: PgxState, reward: jax.Array, truncated: jax.Array) -> TimeStep:
        terminated = jnp.asarray(state.game.terminated, jnp.bool_).reshape(())
        return TimeStep(
            observation=self._observe(state),
            reward=jnp.asarray(reward, jnp.float32).reshape(()),
            terminated=terminated,
            truncated=(jnp.asarray(truncated, jnp.bool_) & ~terminated).reshape(()),
            info={"action_mask": jnp.asarray(state.game.legal_action_mask, jnp.bool_)},
        )

    def _new_game(self, key: jax.Array) -> PgxState:
        """A fresh game, the agent's seat drawn, the opponents' first moves played."""
        k_init, k_seat, k_opp, k_play = jax.random.split(key, 4)
        game = self._env.init(k_init)
        agent = jax.random.randint(k_seat, (), 0, self.num_players, dtype=jnp.int32)
        greedy = jax.random.uniform(k_opp) < self.greedy_prob
        state = PgxState(game, agent, greedy, jnp.zeros((), jnp.int32))
        return self._play_opponents(state, k_play)[0]

    render_suffix = ".svg"

    def render_episode(self, states: Sequence[Any], path: str) -> None:
        """An animated SVG of one game (the agent's and the opponent's moves) with pgx's own
        `save_svg_animation`."""
        import pgx

        pgx.save_svg_animation([s.game for s in states], str(path), frame_duration_seconds=0.6)

    def reset(self, key: jax.Array) -> tuple[PgxState, TimeStep]:
        state = self._new_game(key)
        if self.name in _MAY_END_BEFORE_AGENT:
            # A game that ended before the agent's first move is no episode: deal again.
            state = jax.lax.while_loop(
                lambda c: c[0].game.terminated,
                lambda c: (self._new_game(jax.random.fold_in(key, c[1])), c[1] + 1),
                (state, jnp.ones((), jnp.int32)))[0]
        return state, self._timestep(state, jnp.zeros(()), jnp.zeros((), jnp.bool_))

    def step(self, state: PgxState, action: jax.Array, key: jax.Array) -> tuple[PgxState,
                                                                                 TimeStep]:
        k_step, k_play = jax.random.split(key)
        game = self._env.step(state.game, jnp.asarray(action, jnp.int32), k_step)
        reward = game.rewards[state.agent]
        state = state._replace(game=game, moves=state.moves + 1)
        state, opp_reward = self._play_opponents(state, k_play)
        truncated = jnp.asarray(state.game.truncated, jnp.bool_)
        if self.max_moves is not None:
            truncated = truncated | (state.moves >= self.max_moves)
        return state, self._timestep(state, reward + opp_reward, truncated)

    def game_model(self) -> Any:
        """The game itself as the turn-based port (`rl_envs.pgx_match.PgxGame`), the model a
        planner searches with (AlphaZero); None for a game that has none (one player, chance or
        hidden information)."""
        from rl_envs.pgx_match import PgxGame

        return PgxGame(self.name) if self.name in SEARCHABLE else None

    def __repr__(self) -> str:
        return f"PgxEnv({self.name!r}, opponent={self.opponent!r})"


def search_simulations(opponent: Any, where: str) -> int | None:
    """The simulation count N of `opponent="mcts:N"` (None for any other opponent); a malformed
    or non-positive N is an EnvError naming the form, prefixed by `where`."""
    if not isinstance(opponent, str) or not opponent.startswith("mcts"):
        return None
    count = opponent.removeprefix("mcts:") if opponent.startswith("mcts:") else ""
    if not count.isdigit() or int(count) < 1:
        raise EnvError(f"{where}: the search opponent is 'mcts:N' with N a positive number "
                       f"of simulations per move (e.g. mcts:64), got {opponent!r}.")
    return int(count)


def arena(name: str) -> Any:
    """The match engine of game `name` for `rl arena` (`rl_envs.pgx_match.Arena`)."""
    from rl_envs.pgx_match import Arena

    return Arena(name)


def make(name: str, **kwargs: Any) -> PgxEnv:
    if kwargs.get("opponent") == "self":
        from rl_envs.pgx_selfplay import PgxSelfPlayEnv

        return PgxSelfPlayEnv(name, **kwargs)
    return PgxEnv(name, **kwargs)


def against(kwargs: dict[str, Any], opponent: str | None) -> tuple[dict[str, Any], str]:
    """The arguments of a game played to be judged against one `opponent` ('random' when None):
    the training opponent's settings (a mixed opponent's greedy share, a move limit) replaced,
    so whole games are played against it; the run's other arguments kept."""
    opponent = opponent or "random"
    where = "the opponent to play against"
    if opponent not in JUDGES and search_simulations(opponent, where) is None:
        raise EnvError(f"the opponent to play against must be one of {', '.join(JUDGES)} (a "
                       f"mixed opponent is both: play each), got {opponent!r}")
    kept = {k: v for k, v in kwargs.items() if k not in ("opponent", "greedy_prob", "max_moves")}
    return kept | {"opponent": opponent}, opponent
