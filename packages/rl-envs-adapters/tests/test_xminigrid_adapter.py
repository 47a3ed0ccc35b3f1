"""The xminigrid backend: the ids against the library, the port's contract on a MiniGrid task and
on an XLand world with a ruleset from a local benchmark file, the goal as `terminated` and the
step limit as `truncated` (never both), the GIF renderer, and refused options with the fix."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rl_envs
from rl_core import check_environment
from rl_envs import EnvError

xminigrid = pytest.importorskip("xminigrid")


def _benchmark_file(path: Path) -> Path:
    """A one-ruleset XLand benchmark: pick up the red ball (the only object placed)."""
    from xminigrid.benchmarks import save_bz2_pickle
    from xminigrid.core.constants import TILES_REGISTRY, Colors, Tiles
    from xminigrid.core.goals import AgentHoldGoal
    from xminigrid.core.rules import EmptyRule

    ball = TILES_REGISTRY[Tiles.BALL, Colors.RED]
    save_bz2_pickle({"goals": AgentHoldGoal(tile=ball).encode()[None],
                     "rules": EmptyRule().encode()[None, None],
                     "init_tiles": ball[None, None], "num_rules": jnp.array([1])}, str(path))
    return path


def test_every_xminigrid_environment_is_listed() -> None:
    assert set(rl_envs.list_envs("xminigrid")) == {
        f"xminigrid/{n}" for n in xminigrid.registered_environments()}


def test_check_environment_minigrid_and_an_xland_world(tmp_path: Path) -> None:
    env = rl_envs.make("xminigrid/MiniGrid-Empty-5x5")
    assert env.observation_space.shape == (7, 7, 13 + 12) and env.action_space.n == 6
    assert env.family == "minigrid"
    check_environment(env)
    world = rl_envs.make("xminigrid/XLand-MiniGrid-R1-9x9",
                         benchmark=str(_benchmark_file(tmp_path / "bench")), ruleset=0)
    assert world.family == "xland" and world.observation_space.shape == (5, 5, 25)
    check_environment(world)
    # `rl envs` reads the spaces without the ruleset, which may have to be downloaded
    obs, act = rl_envs.spaces("xminigrid/XLand-MiniGrid-R1-9x9")
    assert act == world.action_space and obs.shape == world.observation_space.shape
    np.testing.assert_array_equal(obs.high, world.observation_space.high)


def test_the_view_is_one_hot_by_default_or_the_ids_themselves() -> None:
    """Each cell of the default view is one tile and one colour, one-hot (13 + 12 numbers), the
    same cells `one_hot=False` gives as the two ids; ids are categories, not magnitudes."""
    hot = rl_envs.make("xminigrid/MiniGrid-Empty-5x5")
    ids = rl_envs.make("xminigrid/MiniGrid-Empty-5x5", one_hot=False)
    assert ids.observation_space.shape == (7, 7, 2)
    assert float(ids.observation_space.high.max()) == 12
    key = jax.random.PRNGKey(3)
    (s1, a), (s2, b) = hot.reset(key), ids.reset(key)
    for act in (0, 1, 0):  # forward, turn right, forward
        (s1, a), (s2, b) = hot.step(s1, jnp.int32(act), key), ids.step(s2, jnp.int32(act), key)
        x, y = np.asarray(a.observation), np.asarray(b.observation)
        assert x.shape == (7, 7, 25) and set(np.unique(x)) == {0.0, 1.0}
        assert np.all(x[..., :13].sum(-1) == 1) and np.all(x[..., 13:].sum(-1) == 1)
        np.testing.assert_array_equal(x[..., :13].argmax(-1), y[..., 0])
        np.testing.assert_array_equal(x[..., 13:].argmax(-1), y[..., 1])
        assert len(np.unique(y[..., 0])) > 1  # the view shows more than one kind of tile
    assert hot.observation_space.contains(a.observation)


def test_goal_terminates_and_the_step_limit_truncates() -> None:
    """Random play on MiniGrid-Empty-5x5 with a 12-step limit, 256 episodes: the goal ends some
    (`terminated`, with xminigrid's positive reward), the limit the others (`truncated`, reward
    0, exactly 12 steps), never both."""
    env = rl_envs.make("xminigrid/MiniGrid-Empty-5x5", max_steps=12)

    def episode(key):
        state, ts = env.reset(key)

        def step(c, k):
            state, ts, steps, end = c
            state, ts = env.step(state, jax.random.randint(k, (), 0, 3), k)  # move and turn
            live = end == 0
            done = ts.terminated | ts.truncated
            end = jnp.where(live & done, jnp.where(ts.terminated, 1, 2), end)
            return (state, ts, steps + live, end), (ts.terminated, ts.truncated, ts.reward, live)

        (_, _, steps, end), (term, trunc, reward, live) = jax.lax.scan(
            step, (state, ts, 0, 0), jax.random.split(key, 12))
        return steps, end, term & live, trunc & live, jnp.where(live, reward, 0.0)

    steps, end, term, trunc, reward = jax.jit(jax.vmap(episode))(
        jax.random.split(jax.random.PRNGKey(0), 256))
    steps, end = np.asarray(steps), np.asarray(end)
    assert not np.any(np.asarray(term) & np.asarray(trunc))
    assert np.all(end > 0)  # every episode ended within the limit
    assert 5 < np.sum(end == 1) < 251 and np.all(steps[end == 2] == 12)
    total = np.asarray(reward).sum(axis=1)
    assert np.all(total[end == 1] > 0) and np.all(total[end == 2] == 0)


def test_render_episode_writes_a_gif(tmp_path: Path) -> None:
    from PIL import Image

    env = rl_envs.make("xminigrid/MiniGrid-Empty-5x5")
    state, _ = env.reset(jax.random.PRNGKey(0))
    states = [state]
    for a in (0, 1, 0):
        state, _ = env.step(state, jnp.int32(a), jax.random.PRNGKey(1))
        states.append(state)
    env.render_episode(states, str(tmp_path / "e.gif"))
    with Image.open(tmp_path / "e.gif") as im:
        assert im.format == "GIF" and im.n_frames == 4


@pytest.mark.parametrize("name, kwargs, words", [
    ("MiniGrid-Empty-5x5", {"ruleset": 3}, "takes no benchmark or ruleset"),
    ("MiniGrid-Empty-5x5", {"max_steps": 0}, "max_steps must be a positive integer"),
    ("MiniGrid-Empty-5x5", {"view_size": 4}, "view_size must be an odd integer"),
    ("MiniGrid-Empty-5x5", {"one_hot": "yes"}, "one_hot must be true or false"),
    ("XLand-MiniGrid-R1-9x9", {"benchmark": "huge-9m"}, "benchmark must be one of trivial-21k"),
    ("XLand-MiniGrid-R1-9x9", {"ruleset": -1}, "ruleset must be a non-negative integer"),
])
def test_bad_options_are_refused_with_the_fix(name: str, kwargs: dict, words: str) -> None:
    with pytest.raises(EnvError, match=words):
        rl_envs.make(f"xminigrid/{name}", **kwargs)


def test_a_benchmark_that_cannot_be_fetched_names_the_file_and_leaves_nothing(
        tmp_path: Path, monkeypatch) -> None:
    from xminigrid import benchmarks

    data = tmp_path / "data"  # xminigrid makes its folder before downloading
    monkeypatch.setattr(benchmarks, "DATA_PATH", str(data))

    def cut_short(repo_id: str, filename: str) -> None:
        (data / filename).write_bytes(b"BZh9 half a file")
        raise OSError("connection reset")

    monkeypatch.setattr(benchmarks, "_download_from_hf", cut_short)
    with pytest.raises(EnvError) as e:
        rl_envs.make("xminigrid/XLand-MiniGrid-R1-9x9", benchmark="small-1m")
    message = str(e.value)
    assert "\n" not in message and str(data / "small_1m_v3") in message
    assert "huggingface.co" in message and "benchmark=/path/to/file" in message
    assert not data.exists()  # neither the partial file nor the folder made for it

    data.mkdir()
    (data / "small_1m_v3").write_bytes(b"not a benchmark")  # damaged: it is not fetched again
    with pytest.raises(EnvError, match="is not a readable benchmark .* delete it"):
        rl_envs.make("xminigrid/XLand-MiniGrid-R1-9x9", benchmark="small-1m")
    assert (data / "small_1m_v3").exists()  # the user's file is theirs to delete


def test_a_local_benchmark_file_is_checked(tmp_path: Path) -> None:
    path = _benchmark_file(tmp_path / "bench")
    with pytest.raises(EnvError, match=r"ruleset 1 is past the benchmark's 1 rulesets"):
        rl_envs.make("xminigrid/XLand-MiniGrid-R1-9x9", benchmark=str(path), ruleset=1)
    (tmp_path / "junk").write_bytes(b"not a benchmark")
    with pytest.raises(EnvError, match="is not an xminigrid benchmark file"):
        rl_envs.make("xminigrid/XLand-MiniGrid-R1-9x9", benchmark=str(tmp_path / "junk"))
