"""`rl render`'s drawing of gymnax tasks as arrays: classic control through gymnasium's renderer
(one environment for the episode, gymnax's own state mapping), MinAtar's channels coloured as
gymnax's Visualizer colours them, both written as a GIF by Pillow."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
from PIL import Image

import rl_envs


def _episode(env_id: str, steps: int) -> tuple[object, list]:
    env = rl_envs.make(env_id)
    state, _ = env.reset(jax.random.PRNGKey(0))
    states = [state]
    for t in range(steps):
        state, _ = env.step(state, jax.numpy.int32(t % 2), jax.random.PRNGKey(t))
        states.append(state)
    return env, states


def test_cartpole_frames_follow_the_cart(tmp_path: Path) -> None:
    env, states = _episode("gymnax/CartPole-v1", 6)
    frames = env._gym_frames(states)
    assert len(frames) == 7 and frames[0].shape == (400, 600, 3) and frames[0].dtype == np.uint8
    assert any(not np.array_equal(frames[0], f) for f in frames[1:])  # the pole moves
    env.render_episode(states, str(tmp_path / "c.gif"))
    with Image.open(tmp_path / "c.gif") as im:
        assert im.format == "GIF" and im.size == (600, 400) and im.n_frames >= 2


def test_minatar_cells_take_the_visualizers_colours(tmp_path: Path) -> None:
    import seaborn as sns

    env, states = _episode("gymnax/Breakout-MinAtar", 3)
    frames = env._minatar_frames(states, cell=4)
    obs = np.asarray(env._env.get_obs(states[0], env.params))  # [10, 10, C]
    assert frames[0].shape == (40, 40, 3)
    palette = [(0.0, 0.0, 0.0), *sns.color_palette("cubehelix", obs.shape[-1])]
    for i, j in ((0, 0), (1, 5), (9, 4)):  # an empty corner, a brick row, the paddle row
        top = int(np.max(obs[i, j] * np.arange(1, obs.shape[-1] + 1)))
        expect = (np.asarray(palette[top]) * 255).astype(np.uint8)
        assert np.array_equal(frames[0][4 * i + 1, 4 * j + 2], expect), (i, j, top)
    env.render_episode(states, str(tmp_path / "b.gif"))
    with Image.open(tmp_path / "b.gif") as im:
        assert im.size == (160, 160) and im.n_frames >= 2
