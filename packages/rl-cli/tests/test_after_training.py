"""`rl run` prepares what follows training while it trains (`after.AfterTraining`): the final
greedy evaluation's program compiled for agents shaped like the run's gives exactly the
evaluation compiled afterwards, a program that does not fit the agents is replaced, and
curves.png's imports and fonts are warmed up."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import rl_algos
import rl_envs
from rl_algos.common import hparams_as_arrays
from rl_cli.after import AfterTraining, final_agents, final_evaluation
from rl_cli.play import compile_play
from rl_cli.request import member_keys


def _setup(members: int):
    spec = rl_algos.get("ppo")
    s_kw, h_kw, _ = spec.presets["classic_control"]
    env = rl_envs.make("gymnax/CartPole-v1")
    algo = spec.make_algorithm(env, spec.config_cls(**{**s_kw, "total_timesteps": 2048}))
    keys = member_keys(list(range(members)))
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (members, *x.shape)),
                      hparams_as_arrays(spec.hparams_cls(**h_kw)))
    agents = final_agents(algo, jax.jit(jax.vmap(algo.init))(keys, hp))
    return env, algo, keys, hp, agents


def test_evaluation_compiled_in_the_background_is_the_same_evaluation() -> None:
    env, algo, keys, hp, agents = _setup(2)
    after = AfterTraining(plots=True, evaluation=(env, algo, keys, hp, 3, 7))
    after.start()
    after.join()
    assert after.play is not None
    ahead = final_evaluation(env, algo.policy, agents, 3, 7, compiled=after.play)
    here = final_evaluation(env, algo.policy, agents, 3, 7)
    for key in ("greedy_eval_return_per_member", "greedy_eval_mean", "greedy_eval_ci95"):
        assert ahead[key] == here[key], key


def test_a_program_that_does_not_fit_the_agents_is_replaced() -> None:
    env, algo, _, _, agents = _setup(2)
    _, _, _, _, three = _setup(3)
    wrong = compile_play(env, algo.policy, three, 3, 7)  # for 3 members, not 2
    replaced = final_evaluation(env, algo.policy, agents, 3, 7, compiled=wrong)
    here = final_evaluation(env, algo.policy, agents, 3, 7)
    assert len(replaced["greedy_eval_return_per_member"]) == 2
    for key in ("greedy_eval_return_per_member", "greedy_eval_mean", "greedy_eval_ci95"):
        assert replaced[key] == here[key], key


def test_nothing_to_prepare_starts_no_thread() -> None:
    after = AfterTraining(plots=False, evaluation=None)
    after.start()
    after.join()
    assert after.play is None and not after._thread.is_alive()


def test_a_board_game_reports_wins_draws_and_losses_and_cartpole_none() -> None:
    """Against a built-in opponent the summary carries each member's greedy win, draw and loss
    shares, which add up to 1 (every tic-tac-toe game ends) and give the mean return (+1 a win,
    -1 a loss); a single-player task gets none of them."""
    spec = rl_algos.get("pqn")
    env = rl_envs.make("pgx/tic_tac_toe")
    algo = spec.make_algorithm(env, spec.config_cls(total_timesteps=4096))
    keys = member_keys([0, 1])
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (2, *x.shape)),
                      hparams_as_arrays(spec.hparams_cls()))
    agents = final_agents(algo, jax.jit(jax.vmap(algo.init))(keys, hp))
    out = final_evaluation(env, algo.policy, agents, 20, 3)
    win, draw, loss = (np.array(out[f"greedy_eval_{k}_rate_per_member"])
                       for k in ("win", "draw", "loss"))
    np.testing.assert_allclose(win + draw + loss, 1.0)
    np.testing.assert_allclose(win - loss, out["greedy_eval_return_per_member"], atol=1e-6)
    cartpole, c_algo, _, _, c_agents = _setup(2)
    assert not any("rate" in k for k in final_evaluation(cartpole, c_algo.policy, c_agents, 2, 3))
