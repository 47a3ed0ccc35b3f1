"""AlphaZero's training program: `make_algorithm(env, config)` gives the `Algorithm`.

AlphaZero (Silver et al., 2018, "A general reinforcement learning algorithm that masters chess,
shogi, and Go through self-play") with the search of Gumbel MuZero (Danihelka et al., 2022,
"Policy improvement by planning with Gumbel", `mctx.gumbel_muzero_policy`, with the backup
batched in `search.py`), as pgx's AlphaZero example pairs them: the game's own rules are the
model (`env.game_model()`, a `rl_core.TurnBasedGame`), the network gives the search its prior and
its leaf values.

One update:
1. self-play: `num_envs` games, `num_steps` moves each, every move chosen by a search of
   `num_simulations` simulations from the current network (Gumbel noise and Sequential Halving
   at the root: the move is the search's choice, its policy target the search's improved policy
   `action_weights`); a finished game is replaced by a new one;
2. targets: each position's value target is its game's outcome for the player who moved there
   (the sum of the rewards that player receives until the game ends), mixed with the search's
   value of the position by `value_mix` (0: the outcome alone, as AlphaZero; 1: the search's
   root value alone, as a bootstrap). The targets of an
   update's moves are computed one update later, over both updates' moves, so a game that runs
   across the boundary is not lost: every position whose game ends within `num_steps` moves
   of the next update has its target (all of them when `num_steps` is at least the game's
   longest length: 9 moves in tic_tac_toe, 42 in connect_four); one still going is left out;
3. those positions join a replay of the last `replay_updates` updates; `sgd_steps` AdamW steps on
   minibatches drawn uniformly from its positions with targets (with `reflect`, each position
   or its mirror image with equal chance), on the cross-entropy to the search policy plus
   `value_coef` times the squared value error.

With `data_axis` (see `rl_core.parallel.data_parallel`) the algorithm is one device's share of
a data-parallel agent: it plays `num_envs / D` self-play games and `eval_envs / D` yardstick
games, keeps its own replay of its games' positions, draws `minibatch_size / D` of them for each
SGD step and averages the gradients (and the loss metrics) over the axis, so every device applies
the gradient of the whole minibatch and the parameters stay identical. Without it the program is
exactly the single-device one.

Alongside, `eval_envs` games against the environment's own opponent are played by the network
alone (`make_policy`'s greedy move, no search), one move per self-play move: their returns are
the run's episode metrics, so the progress line, TensorBoard and the final return show the agent
against a fixed yardstick. They cost a network call and an opponent move per move, and train
nothing. A saved agent is the network; evaluation, rendering and `rl arena` play its greedy
move (no search), as for every algorithm.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from rl_algos.alphazero.config import AlphaZeroConfig
from rl_algos.alphazero.network import PolicyValueNet
from rl_algos.alphazero.replay import Replay, mirrored, mixed_value_targets, outcome_targets
from rl_algos.common.batching import with_batch_axis
from rl_algos.common.carry import initial_carry, next_carry
from rl_algos.common.config import require
from rl_algos.common.envs import make_vector_env
from rl_algos.common.policy import agent_fn, model_structure
from rl_algos.common.qvalues import masked_argmax
from rl_algos.common.spec import game_model
from rl_core import Agent, Algorithm, DataAxis, Policy, RunnerState, TrainResult, rollout
from rl_core import make_train as _make_train

_LOW = jnp.finfo(jnp.float32).min  # the logit of an illegal move


class Moves(NamedTuple):
    """One update's self-play moves, leaves `[num_steps, num_envs, ...]`."""

    observation: jax.Array  # float32, the mover's view before the move
    legal: jax.Array  # bool [.., A]
    policy: jax.Array  # float32 [.., A], the search's improved policy
    searched: jax.Array  # float32, the search's root value (the mover's view)
    mover: jax.Array  # int32
    rewards: jax.Array  # float32 [.., P], what the move gave each player
    over: jax.Array  # bool, the move ended its game
    real: jax.Array  # bool, a move played (False: the empty block before the first update)


class Extras(NamedTuple):
    """AlphaZero's own carry beside the yardstick environments (`RunnerState`)."""

    games: Any  # the self-play games' states, leaves [num_envs, ...]
    played: jax.Array  # int32 [num_envs], moves played so far in each self-play game
    pending: Moves  # the previous update's moves, whose targets wait for this update's
    replay: Replay


def network_model(env: Any, config: AlphaZeroConfig) -> Callable[[jax.Array], PolicyValueNet]:
    """`key -> PolicyValueNet` over the environment's observation planes."""
    return partial(PolicyValueNet, obs_shape=tuple(env.observation_space.shape),
                   num_actions=env.action_space.n, hidden_size=config.hidden_size,
                   num_layers=config.num_layers, num_blocks=config.num_blocks,
                   channels=config.channels)


def make_policy(env: Any, config: AlphaZeroConfig) -> Policy:
    """The network's own move: the most probable legal move (deterministic), or one sampled from
    its policy over the legal moves; no search. The noise is a key."""
    params_like, static = model_structure(network_model(env, config))

    def act(agent: Agent, obs: jax.Array, noise: jax.Array, deterministic: bool,
            mask: jax.Array | None = None, explore: Any = None) -> tuple[jax.Array, Any]:
        logits, _ = jax.vmap(eqx.combine(agent.params, static))(obs)
        if deterministic:
            return masked_argmax(logits, mask).astype(jnp.int32), {}
        if mask is not None:
            logits = jnp.where(mask, logits, _LOW)
        return jax.random.categorical(noise, logits).astype(jnp.int32), {}

    return Policy(Agent(params_like), act, lambda key, shape: key)


def evaluate_positions(static: Any, params: Any, obs: jax.Array, legal: jax.Array
                       ) -> tuple[jax.Array, jax.Array]:
    """The network on positions `[B, ...]`: logits `[B, A]` (illegal moves at the lowest float)
    and values `[B]`."""
    logits, value = jax.vmap(eqx.combine(params, static))(obs)
    return jnp.where(legal, logits, _LOW), value


def make_search(game: Any, static: Any, config: AlphaZeroConfig, gumbel_scale: float,
                policy: Callable[..., Any] | None = None
                ) -> Callable[[Any, Any, jax.Array], tuple[Any, Any]]:
    """`search(params, states [B], key) -> (views, mctx.PolicyOutput)`: Gumbel MuZero's search of
    `config.num_simulations` simulations from each game, the network as prior and leaf value and
    the game as the model. `gumbel_scale` 1 samples the root's candidates (self-play's
    exploration); 0 makes the search's choice deterministic (play). `policy` is the search's
    implementation, `alphazero.search.gumbel_muzero_policy` unless given (`tools/bench_search.py`
    gives `mctx.gumbel_muzero_policy`), called as `policy(params, key, root, recurrent_fn,
    num_simulations, invalid_actions, max_num_considered_actions=..., gumbel_scale=...)`."""
    import mctx

    from rl_algos.alphazero.search import gumbel_muzero_policy

    policy = policy or gumbel_muzero_policy
    evaluate = partial(evaluate_positions, static)

    def recurrent_fn(params: Any, key: jax.Array, action: jax.Array, states: Any):
        """mctx's model: play `action [B]` in the games `states`; the reward is the mover's,
        the discount -1 when the move hands over to the other player (values are the mover's),
        0 at the end of a game (the search backs up nothing past it)."""
        mover = jax.vmap(game.view)(states).mover
        nxt = jax.vmap(game.step)(states, action, jax.random.split(key, action.shape[0]))
        v = jax.vmap(game.view)(nxt)
        reward = jnp.take_along_axis(v.rewards, mover[:, None], axis=1)[:, 0]
        discount = jnp.where(v.over, 0.0, jnp.where(v.mover == mover, 1.0, -1.0))
        logits, value = evaluate(params, v.observation, v.legal)
        return mctx.RecurrentFnOutput(reward=reward, discount=discount, prior_logits=logits,
                                      value=jnp.where(v.over, 0.0, value)), nxt

    def search(params: Any, states: Any, key: jax.Array) -> tuple[Any, Any]:
        v = jax.vmap(game.view)(states)
        logits, value = evaluate(params, v.observation, v.legal)
        root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)
        return v, policy(
            params, key, root, recurrent_fn, config.num_simulations, ~v.legal,
            max_num_considered_actions=min(config.max_considered_actions, game.num_actions),
            gumbel_scale=gumbel_scale)

    return search


def make_planner(env: Any, config: AlphaZeroConfig, simulations: int | None = None
                 ) -> Callable[[Agent, Any, jax.Array], jax.Array]:
    """`plan(agent, state, key) -> action` (int32 []): the trained agent playing with search, as
    AlphaZero plays: `simulations` simulations (the run's `num_simulations` when None) from the
    game `state` (one game of `env.game_model()`), the search's deterministic choice (no Gumbel
    noise).

    Vmapped over games (a match's), one agent's plans are one search over the batch of games, as
    self-play searches: a vmap of one-game searches batches each of the search's gathers and
    scatters over a unit axis, a few percent slower on CPU. Without Gumbel noise
    and in a game without chance the key changes no move, so the batch searches with the first
    game's."""
    game = game_model(env, "alphazero")
    if simulations is not None:
        config = dataclasses.replace(config, num_simulations=simulations)
    search = make_search(game, model_structure(network_model(env, config))[1], config,
                         gumbel_scale=0.0)

    def searched(params: Any, states: Any, key: jax.Array) -> jax.Array:
        return search(params, states, key)[1].action.astype(jnp.int32)

    def one_game(params: Any, state: Any, key: jax.Array) -> jax.Array:
        return searched(params, jax.tree.map(lambda x: x[None], state), key)[0]

    plan_one = jax.custom_batching.custom_vmap(one_game)

    @plan_one.def_vmap
    def _plan_games(axis_size: int, in_batched: list[Any], params: Any, state: Any,
                    key: jax.Array) -> tuple[jax.Array, bool]:
        params_batched, state_batched, key_batched = in_batched
        if any(jax.tree.leaves(params_batched)):  # several agents: each its own search
            return jax.vmap(one_game)(
                *with_batch_axis((params, state, key), tuple(in_batched), axis_size)), True
        states = with_batch_axis(state, state_batched, axis_size)
        return searched(params, states, key[0] if key_batched else key), True

    def plan(agent: Agent, state: Any, key: jax.Array) -> jax.Array:
        return plan_one(agent.params, state, key)

    return plan


def check_data_parallel(config: AlphaZeroConfig, num_devices: int) -> None:
    """Every device takes an equal share of the self-play games, the yardstick games and each
    minibatch."""
    for name in ("num_envs", "eval_envs", "minibatch_size"):
        value = getattr(config, name)
        require(value % num_devices == 0,
                f"data parallelism over {num_devices} devices needs {name} divisible by "
                f"{num_devices}, got {name}={value}; set it to a multiple")


def make_algorithm(env: Any, config: AlphaZeroConfig, data_axis: DataAxis | None = None
                   ) -> Algorithm:
    """AlphaZero on `env` (a single-agent board-game environment with a `game_model()`); with
    `data_axis`, one device's share of a data-parallel agent (wrap it with
    `rl_core.data_parallel`)."""
    config.validate()
    n_dev = 1 if data_axis is None else data_axis.size
    if data_axis is not None:
        check_data_parallel(config, n_dev)
    axis_name = None if data_axis is None else data_axis.name
    game = game_model(env, "alphazero")
    reflect = getattr(game, "reflect", None)
    # The game model declares its symmetry (`TurnBasedGame.reflect`): the adapter knows which.
    name = getattr(game, "name", "this game")
    require(not config.reflect or reflect is not None,
            f"reflect=true trains on the board's mirror images, and {name} has no left-right "
            "symmetry (its game model gives no reflect); drop --set reflect=true")
    make_model = network_model(env, config)
    static = model_structure(make_model)[1]
    policy = make_policy(env, config)
    venv = make_vector_env(env, config.eval_envs // n_dev, flatten=False)
    # This device's self-play games, moves per update and replay.
    n, t = config.num_envs // n_dev, config.num_steps
    c, minibatch = config.replay_updates * n * t, config.minibatch_size // n_dev
    num_actions = game.num_actions

    def optimizer(hp: Any) -> optax.GradientTransformation:
        return optax.chain(optax.clip_by_global_norm(hp.max_grad_norm),
                           optax.adamw(hp.lr, weight_decay=hp.weight_decay))

    search = make_search(game, static, config, gumbel_scale=1.0)
    evaluate = partial(evaluate_positions, static)

    def selfplay_move(params: Any, games: Any, played: jax.Array, key: jax.Array):
        k_search, k_step, k_new, *k_open = jax.random.split(
            key, 4 if config.opening_moves else 3)
        v, out = search(params, games, k_search)
        action = out.action
        if config.opening_moves:
            # AlphaZero's opening temperature: the first moves of a game are drawn from the
            # search's improved policy, so that self-play keeps visiting varied positions.
            drawn = jax.random.categorical(k_open[0], jnp.log(out.action_weights))
            action = jnp.where(played < config.opening_moves, drawn, action)
        nxt = jax.vmap(game.step)(games, action, jax.random.split(k_step, n))
        after = jax.vmap(game.view)(nxt)
        fresh = jax.vmap(game.init)(jax.random.split(k_new, n))
        games = jax.tree.map(
            lambda a, b: jnp.where(after.over.reshape((n,) + (1,) * (a.ndim - 1)), a, b),
            fresh, nxt)
        played = jnp.where(after.over, 0, played + 1)
        root_value = out.search_tree.node_values[:, out.search_tree.ROOT_INDEX]
        return (games, played), Moves(v.observation, v.legal, out.action_weights, root_value,
                                      v.mover, after.rewards, after.over,
                                      jnp.ones((n,), jnp.bool_))

    def init_extras(_: Any) -> Extras:
        obs_shape = tuple(env.observation_space.shape)
        replay = Replay(jnp.zeros((c, *obs_shape), jnp.float32),
                        jnp.zeros((c, num_actions), jnp.bool_),
                        jnp.zeros((c, num_actions), jnp.float32), jnp.zeros((c,), jnp.float32),
                        jnp.zeros((c,), jnp.bool_))
        pending = Moves(jnp.zeros((t, n, *obs_shape), jnp.float32),
                        jnp.zeros((t, n, num_actions), jnp.bool_),
                        jnp.zeros((t, n, num_actions), jnp.float32),
                        jnp.zeros((t, n), jnp.float32), jnp.zeros((t, n), jnp.int32),
                        jnp.zeros((t, n, game.num_players), jnp.float32),
                        jnp.zeros((t, n), jnp.bool_), jnp.zeros((t, n), jnp.bool_))
        return Extras(None, jnp.zeros((n,), jnp.int32), pending, replay)

    def init(key: jax.Array, hp: Any) -> RunnerState:
        k_carry, k_games = jax.random.split(key)
        carry = initial_carry(k_carry, make_model, venv, optimizer(hp).init, init_extras,
                              data_axis=data_axis)
        if data_axis is not None:  # each device its own games (the model is the same)
            k_games = jax.random.fold_in(k_games, jax.lax.axis_index(data_axis.name))
        games = jax.vmap(game.init)(jax.random.split(k_games, n))
        return carry._replace(extras=carry.extras._replace(games=games))

    def loss_fn(params: Any, mb: Replay, value_coef: jax.Array):
        logits, value = evaluate(params, mb.observation, mb.legal)
        weight = mb.valid.astype(jnp.float32)
        count = jnp.maximum(weight.sum(), 1.0)
        policy_loss = optax.softmax_cross_entropy(logits, mb.policy)
        value_loss = jnp.square(value - mb.value)
        policy_loss = (weight * policy_loss).sum() / count
        value_loss = (weight * value_loss).sum() / count
        return policy_loss + value_coef * value_loss, {
            "policy_loss": policy_loss, "value_loss": value_loss}

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def act_yardstick(params: Any, ts: Any, key: jax.Array) -> tuple[jax.Array, Any]:
        action, _ = policy.act(Agent(params), ts.observation, key, True,
                               ts.info.get("action_mask"))
        return action, {}

    def update(carry: RunnerState, hp: Any) -> tuple[RunnerState, dict[str, jax.Array]]:
        ts_ = carry.train_state
        params = ts_.params
        key, k_play, k_yard, k_sgd = jax.random.split(carry.key, 4)
        (games, played), moves = jax.lax.scan(
            lambda g, k: selfplay_move(params, *g, k),
            (carry.extras.games, carry.extras.played), jax.random.split(k_play, t))
        # The previous update's moves get their targets from both updates' moves.
        prev = carry.extras.pending
        both = jax.tree.map(lambda a, b: jnp.concatenate([a, b]), prev, moves)
        value, valid = outcome_targets(both.rewards, both.over, both.mover)
        value = mixed_value_targets(value[:t], prev.searched, hp.value_mix)
        start = (ts_.step % config.replay_updates) * (n * t)
        new = Replay(prev.observation, prev.legal, prev.policy, value, valid[:t] & prev.real)
        replay = jax.tree.map(
            lambda buf, x: jax.lax.dynamic_update_slice_in_dim(
                buf, x.reshape(n * t, *x.shape[2:]).astype(buf.dtype), start, axis=0),
            carry.extras.replay, new)

        (env_state, timestep, _), traj = rollout(
            venv, partial(act_yardstick, params), carry.env_state, carry.timestep, k_yard, t)

        tx = optimizer(hp)
        weights = replay.valid.astype(jnp.float32)
        total = weights.sum()
        p = jnp.where(total > 0, weights / jnp.maximum(total, 1.0), 1.0 / c)

        def sgd_step(state, k):
            params, opt_state = state
            if config.reflect:  # a key of its own for the flips (off: the streams as before)
                k, k_flip = jax.random.split(k)
                flip = jax.random.bernoulli(k_flip, 0.5, (minibatch,))
            idx = jax.random.choice(k, c, (minibatch,), p=p)
            mb = jax.tree.map(lambda x: x[idx], replay)
            if config.reflect:
                mb = mirrored(reflect, mb, flip)
            (_, metrics), grads = grad_fn(params, mb, hp.value_coef)
            if axis_name is not None:
                grads, metrics = jax.lax.pmean((grads, metrics), axis_name)
            updates, opt_state = tx.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), metrics

        (params, opt_state), metrics = jax.lax.scan(
            sgd_step, (params, ts_.opt_state), jax.random.split(k_sgd, config.sgd_steps))
        metrics = jax.tree.map(jnp.mean, metrics)
        counts = {"selfplay_games": moves.over.sum().astype(jnp.float32),
                  "replay_positions": total}
        if axis_name is not None:
            counts = jax.lax.psum(counts, axis_name)
        return next_carry(carry, params, opt_state, (env_state, timestep, key),
                          Extras(games, played, moves, replay), traj, {**metrics, **counts},
                          data_axis)

    return Algorithm(init, update, config.num_updates, config.steps_per_update // n_dev,
                     agent_fn(venv), policy)


def make_train(env: Any, config: AlphaZeroConfig) -> Callable[[jax.Array, Any], TrainResult]:
    """`train(key, hparams) -> TrainResult`, pure: `jax.jit(jax.vmap(train))` trains many seeds."""
    return _make_train(make_algorithm(env, config))
