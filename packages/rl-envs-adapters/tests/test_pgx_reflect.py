"""The board games' left-right reflection (`PgxGame.reflect`): the mirror image of a position is
the position the game reaches by the mirrored moves, and the legal moves are mirrored with it."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("pgx")

from rl_envs.pgx_match import REFLECTIONS, PgxGame  # noqa: E402


def _mirror_move(name: str, action: int, shape: tuple[int, ...]) -> int:
    h, w = shape[:2]
    if REFLECTIONS[name] == "columns":
        return w - 1 - action
    if action >= h * w:  # a pass
        return action
    return (action // w) * w + (w - 1 - action % w)


@pytest.mark.parametrize("name", ["connect_four", "tic_tac_toe", "go_9x9", "go_19x19"])
def test_the_mirror_image_is_the_game_after_the_mirrored_moves(name: str) -> None:
    game = PgxGame(name)
    step = jax.jit(game.step)
    rng = np.random.default_rng(0)
    state = mirrored = game.init(jax.random.PRNGKey(0))
    checked = 0
    for i in range(12):
        view, view_m = game.view(state), game.view(mirrored)
        if bool(view.over):
            break
        obs_r, legal_r = game.reflect(view.observation, view.legal)
        np.testing.assert_array_equal(np.asarray(obs_r), np.asarray(view_m.observation))
        np.testing.assert_array_equal(np.asarray(legal_r), np.asarray(view_m.legal))
        checked += 1
        legal = np.flatnonzero(np.asarray(view.legal))
        action = int(rng.choice(legal))
        key = jax.random.PRNGKey(i)
        state = step(state, jnp.int32(action), key)
        mirrored = step(mirrored, jnp.int32(_mirror_move(name, action, game.observation_shape)),
                        key)
    assert checked >= 5
    # The reflection is its own inverse, and it moves something (the boards are not all
    # symmetric).
    view = game.view(state)
    obs_r, legal_r = game.reflect(view.observation, view.legal)
    twice = game.reflect(obs_r, legal_r)
    np.testing.assert_array_equal(np.asarray(twice[0]), np.asarray(view.observation))
    np.testing.assert_array_equal(np.asarray(twice[1]), np.asarray(view.legal))
    assert not np.array_equal(np.asarray(obs_r), np.asarray(view.observation))


@pytest.mark.parametrize("name", ["othello", "hex", "chess"])
def test_a_game_without_a_left_right_symmetry_has_no_reflection(name: str) -> None:
    assert PgxGame(name).reflect is None
