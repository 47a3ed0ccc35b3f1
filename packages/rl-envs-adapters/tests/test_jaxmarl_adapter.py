"""The jaxmarl backend behind the multi-agent port: the contract (three MPE tasks and SMAX 3m by
default, every listed id under `-m slow`), padded observations and masked actions for agents of
different sizes, the step limit as `truncated` on every agent at once, SMAX's flags (dead units
terminated, a decided battle terminating everyone, its step limit truncating the living) and
wins, Overcooked's step limit and shaping, Hanabi's turns and end, Switch Riddle's two ends,
Coin Game's inner games and STORM's limit (these four in the `heavy` tier: their first compile
takes minutes here), and a quiet import."""

from __future__ import annotations

import subprocess
import sys

import jax
import numpy as np
import pytest

import rl_envs
from rl_core import AutoReset, EpisodeStatistics, VectorEnv, check_multiagent_environment

pytest.importorskip("jaxmarl")

FAST = ["jaxmarl/MPE_simple_spread_v3", "jaxmarl/MPE_simple_speaker_listener_v4",
        "jaxmarl/MPE_simple_reference_v3", "jaxmarl/SMAX_3m", "jaxmarl/Overcooked_cramped_room"]


@pytest.mark.parametrize("env_id", FAST)
def test_check_multiagent_environment(env_id: str) -> None:
    check_multiagent_environment(rl_envs.make(env_id))


@pytest.mark.slow
@pytest.mark.parametrize("env_id", rl_envs.list_envs("jaxmarl"))
def test_check_multiagent_environment_every_task(env_id: str) -> None:
    check_multiagent_environment(rl_envs.make(env_id))


def test_every_listed_task_is_jaxmarls() -> None:
    import jaxmarl
    from jaxmarl.environments.smax.smax_env import MAP_NAME_TO_SCENARIO

    names = [i.removeprefix("jaxmarl/") for i in rl_envs.list_envs("jaxmarl")]
    mpe = [n for n in names if n.startswith("MPE_")]
    smax = [n.removeprefix("SMAX_") for n in names if n.startswith("SMAX_")]
    assert len(mpe) == 8 and set(mpe) <= set(jaxmarl.registered_envs)
    fixed = {k for k, v in MAP_NAME_TO_SCENARIO.items() if not v.smacv2_unit_type_generation}
    from jaxmarl.environments.overcooked import overcooked_layouts

    layouts = [n.removeprefix("Overcooked_") for n in names if n.startswith("Overcooked_")]
    assert set(smax) == fixed and set(layouts) == set(overcooked_layouts)
    games = [n for n in names if n in ("hanabi", "switch_riddle", "coin_game", "storm_np")]
    assert len(games) == 4 and set(games) <= set(jaxmarl.registered_envs)
    assert len(mpe) + len(smax) + len(layouts) + len(games) == len(names)
    assert [rl_envs.family(f"jaxmarl/{g}") for g in games] == [
        "hanabi", "switch_riddle", "coin_game", "storm"]
    assert {rl_envs.family(f"jaxmarl/SMAX_{s}") for s in smax} == {"smax"}
    assert {rl_envs.family(f"jaxmarl/Overcooked_{s}") for s in layouts} == {"overcooked"}


def test_agents_of_different_sizes_are_padded_and_masked() -> None:
    """simple_speaker_listener: the speaker sees 3 numbers and has 3 actions, the listener 11
    and 5."""
    env = rl_envs.make("jaxmarl/MPE_simple_speaker_listener_v4")
    assert env.agents == ("speaker_0", "listener_0")
    assert env.obs_sizes == (3, 11) and env.action_counts == (3, 5)
    assert env.observation_space.shape == (11,) and env.action_space.n == 5
    _, ts = env.reset(jax.random.PRNGKey(0))
    np.testing.assert_array_equal(ts.observation[0, 3:], 0.0)
    np.testing.assert_array_equal(ts.info["action_mask"],
                                  [[True, True, True, False, False], [True] * 5])


def test_the_step_limit_truncates_every_agent_and_auto_reset_follows() -> None:
    env = AutoReset(rl_envs.make("jaxmarl/MPE_simple_spread_v3"))

    def body(carry, k):
        s, _ = carry
        k_act, k_step = jax.random.split(k)
        s, ts = env.step(s, jax.random.randint(k_act, (3,), 0, 5), k_step)
        return (s, ts), (ts.terminated, ts.truncated, ts.reward)

    @jax.jit
    def run(key):
        return jax.lax.scan(body, env.reset(key), jax.random.split(key, 60))

    _, (term, trunc, reward) = run(jax.random.PRNGKey(0))
    term, trunc = np.asarray(term), np.asarray(trunc)
    assert not term.any()
    ends = np.flatnonzero(trunc.all(axis=1))
    np.testing.assert_array_equal(ends, [25, 51])  # 26 steps an episode, every agent at once
    assert np.array_equal(trunc.any(axis=1), trunc.all(axis=1))
    assert np.all(np.isfinite(np.asarray(reward))) and reward.shape == (60, 3)


def test_making_an_environment_prints_nothing() -> None:
    code = "import rl_envs; rl_envs.make('jaxmarl/MPE_simple_spread_v3')"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "" and "ubmoduled" not in p.stderr, (p.stdout, p.stderr)


def _smax_episodes(env, policy, num_steps: int):
    """`num_steps` steps of 8 copies of SMAX `env` under `policy(ts) -> actions [8, A]`: per
    step the flags, `won`, `alive`, the episode's length and return (`[T, 8, A]`, `[T, 8]`)."""
    venv = VectorEnv(AutoReset(EpisodeStatistics(env)), 8)

    def body(carry, k):
        s, ts = carry
        s, nts = venv.step(s, policy(ts), k)
        i = nts.info
        return (s, nts), (nts.terminated, nts.truncated, i["won"], i["alive"],
                          i["episode_length"], i["episode_return"].sum(-1))

    @jax.jit
    def run(key):
        return jax.lax.scan(body, venv.reset(key), jax.random.split(key, num_steps))[1]

    return [np.asarray(x) for x in run(jax.random.PRNGKey(0))]


def test_smax_dead_units_are_terminated_and_a_won_battle_ends_for_everyone() -> None:
    """A scripted ally (attack the first enemy in range, else advance east) against the heuristic
    enemy: battles are decided (won or lost) within the step limit; a unit out mid-battle is
    terminated and nothing else is (`alive`, a state key, is the next episode's on a step that
    ends one, so only mid-battle steps compare it); a decided battle terminates every ally;
    `won` marks exactly the episodes the allies won, whose team return is 3 allies x (1 for the
    enemies' health + 1 for the win)."""
    env = rl_envs.make("jaxmarl/SMAX_3m")

    def advance_or_attack(ts):
        mask = ts.info["action_mask"]  # [8, 3, 8]: 4 moves, stop, attack one of 3 enemies
        attack = mask[..., 5:]
        return jax.numpy.where(attack.any(-1), attack.argmax(-1) + 5,
                               jax.numpy.where(mask[..., 1], 1, 4))

    term, trunc, won, alive, length, ret = _smax_episodes(env, advance_or_attack, 200)
    over = (term | trunc).all(-1)
    assert over.sum() >= 40 and not trunc.any()
    np.testing.assert_array_equal(term[over], True)
    np.testing.assert_array_equal(term[~over], ~alive[~over])  # mid-battle: out = dead
    assert (~alive[~over]).any()  # some units died before their battle ended
    np.testing.assert_array_equal(won.any(-1), won.all(-1))
    assert not (won[..., 0] & ~over).any()
    wins, losses = over & won[..., 0], over & ~won[..., 0]
    assert wins.sum() >= 10 and losses.sum() >= 10, (wins.sum(), losses.sum())
    np.testing.assert_allclose(ret[wins], 6.0, rtol=1e-5)
    assert (ret[losses] < 6.0).all()


def test_smax_step_limit_truncates_the_living_and_terminates_the_dead() -> None:
    """With `max_steps=5` (JaxMARL's keyword, passed through) and allies that only stop, every
    episode ends on the step limit (6 steps) undecided, too soon for the enemy to kill a marine:
    every ally is truncated, none terminated, and nobody won."""
    env = rl_envs.make("jaxmarl/SMAX_3m", max_steps=5)
    term, trunc, won, alive, length, _ = _smax_episodes(
        env, lambda ts: jax.numpy.full((8, 3), 4), 30)
    over = (term | trunc).all(-1)
    np.testing.assert_array_equal(length[over], 6)
    assert over.sum() == 8 * 5 and not won.any()
    np.testing.assert_array_equal(trunc[over], True)
    assert not trunc[~over].any() and not term.any() and alive.all()


def test_overcooked_ends_on_its_step_limit_and_reports_its_shaping_apart() -> None:
    """Cramped room with `max_steps=50` under random cooks, 8 kitchens for 204 steps: every
    episode is 50 steps and ends truncated for both cooks (never terminated); JaxMARL's shaping
    reward (onions or dishes put down, soups picked up: 3 or 5) shows in
    `info["shaped_reward"]` `[8, 2]`, and the reward itself is only what deliveries earn
    (multiples of 20, the same for both cooks)."""
    env = rl_envs.make("jaxmarl/Overcooked_cramped_room", max_steps=50)
    assert env.num_agents == 2 and env.observation_space.shape == (4 * 5 * 26,)
    venv = VectorEnv(AutoReset(EpisodeStatistics(env)), 8)

    def body(carry, k):
        s, ts = carry
        k1, k2 = jax.random.split(k)
        s, nts = venv.step(s, jax.random.randint(k1, (8, 2), 0, 6), k2)
        return (s, nts), (nts.terminated, nts.truncated, nts.reward, nts.info["shaped_reward"],
                          nts.info["episode_length"])

    @jax.jit
    def run(key):
        return jax.lax.scan(body, venv.reset(key), jax.random.split(key, 204))[1]

    term, trunc, reward, shaped, length = (np.asarray(x) for x in run(jax.random.PRNGKey(0)))
    assert not term.any() and shaped.shape == (204, 8, 2)
    np.testing.assert_array_equal(trunc.any(-1), trunc.all(-1))
    np.testing.assert_array_equal(np.nonzero(trunc[:, 0, 0])[0], [49, 99, 149, 199])
    np.testing.assert_array_equal(length[trunc[..., 0]], 50)
    assert set(np.unique(shaped)) <= {0.0, 3.0, 5.0} and (shaped > 0).any()
    np.testing.assert_array_equal(reward[..., 0], reward[..., 1])
    np.testing.assert_array_equal(reward % 20, 0)


def _legal_random_rollout(env, num_envs: int, num_steps: int):
    """`num_steps` steps of `num_envs` copies of `env` under uniformly random legal actions:
    the next TimeStep's leaves and the mask the actions were drawn from, each `[T, N, ...]`."""
    venv = VectorEnv(AutoReset(EpisodeStatistics(env)), num_envs)
    n = env.action_space.n

    def body(carry, k):
        s, ts = carry
        k_a, k_s = jax.random.split(k)
        mask = ts.info.get("action_mask", jax.numpy.ones((num_envs, env.num_agents, n), bool))
        logits = jax.numpy.where(mask, 0.0, -jax.numpy.inf)
        s, nts = venv.step(s, jax.random.categorical(k_a, logits), k_s)
        return (s, nts), (nts, mask)

    @jax.jit
    def run(key):
        return jax.lax.scan(body, venv.reset(key), jax.random.split(key, num_steps))[1]

    return jax.tree.map(np.asarray, run(jax.random.PRNGKey(0)))


@pytest.mark.heavy
def test_hanabi_only_the_current_player_moves_and_the_game_ends_terminated() -> None:
    """Random legal play, 16 tables for 200 turns: on every turn exactly one player has a move
    other than the no-op (the last action), the others only the no-op, and within a game the
    turn passes to the other player each step (the mask is the new state's); every game ends by
    its rules, `terminated` for both players at once, never `truncated`; both get the same
    reward."""
    env = rl_envs.make("jaxmarl/hanabi")
    ts, mask = _legal_random_rollout(env, 16, 200)
    noop = env.action_space.n - 1
    movers = mask[..., :noop].any(-1)  # [T, N, A]
    np.testing.assert_array_equal(movers.sum(-1), 1)
    np.testing.assert_array_equal(mask[..., noop], ~movers)
    mover = movers.argmax(-1)  # [T, N]: whose turn the mask of step t gave
    same_game = ~ts.terminated[:-1, :, 0]  # step t+1's mask is the same game's next turn
    assert same_game.any()
    np.testing.assert_array_equal(mover[1:][same_game], 1 - mover[:-1][same_game])
    assert not ts.truncated.any() and ts.terminated.any()
    np.testing.assert_array_equal(ts.terminated.any(-1), ts.terminated.all(-1))
    np.testing.assert_array_equal(ts.reward[..., 0], ts.reward[..., 1])


@pytest.mark.heavy
def test_switch_riddle_telling_terminates_and_the_step_limit_truncates() -> None:
    """3 prisoners, random actions, 64 rooms for 120 steps: an episode ends `terminated` (for
    all) exactly when its last step pays +1 or -1 to everyone (someone told), and `truncated`
    when it reaches JaxMARL's limit of 6 steps with nothing said (reward 0); both kinds occur."""
    env = rl_envs.make("jaxmarl/switch_riddle")
    ts, _ = _legal_random_rollout(env, 64, 120)
    term, trunc, reward = ts.terminated, ts.truncated, ts.reward
    np.testing.assert_array_equal(term.any(-1), term.all(-1))
    np.testing.assert_array_equal(trunc.any(-1), trunc.all(-1))
    assert not (term & trunc).any() and term.any() and trunc.any()
    told = term[..., 0]
    assert set(np.unique(reward[told][:, 0])) <= {-1.0, 1.0}
    np.testing.assert_array_equal(reward[~told], 0.0)
    np.testing.assert_array_equal(ts.info["episode_length"][trunc[..., 0]], 6)


@pytest.mark.heavy
def test_coin_game_runs_ten_inner_games_then_truncates() -> None:
    """Coin Game's defaults: an episode is 10 inner games of 10 steps, 100 steps ended by the
    limit alone (`truncated`, never `terminated`); `inner_episode_done` marks every 10th step."""
    env = rl_envs.make("jaxmarl/coin_game")
    ts, _ = _legal_random_rollout(env, 4, 210)
    assert not ts.terminated.any()
    ends = np.flatnonzero(ts.truncated[:, 0, 0])
    np.testing.assert_array_equal(ends, [99, 199])
    inner = np.flatnonzero(ts.info["inner_episode_done"][:, 0, 0])
    np.testing.assert_array_equal(inner, np.arange(9, 210, 10))


@pytest.mark.heavy
def test_storm_truncates_after_its_152_steps_paying_nothing_on_the_last() -> None:
    """STORM's n-player InTheMatrix with 3 agents: episodes of 152 steps ended by the limit alone
    (`truncated` for all, never `terminated`); the last step, on which JaxMARL restarts the grid,
    pays nothing; the rewards are each agent's own (they differ somewhere)."""
    env = rl_envs.make("jaxmarl/storm_np", num_agents=3)
    assert env.num_agents == 3 and env.observation_space.shape == (5 * 5 * 14,)
    ts, _ = _legal_random_rollout(env, 8, 310)
    assert not ts.terminated.any()
    np.testing.assert_array_equal(np.flatnonzero(ts.truncated[:, 0, 0]), [151, 303])
    np.testing.assert_array_equal(ts.truncated.any(-1), ts.truncated.all(-1))
    np.testing.assert_array_equal(ts.reward[[151, 303]], 0.0)
    assert (ts.reward[..., 0] != ts.reward[..., 1]).any()


@pytest.mark.parametrize("name, renders", [
    ("MPE_simple_spread_v3", True), ("SMAX_3m", True), ("Overcooked_cramped_room", True),
    ("hanabi", False), ("switch_riddle", False), ("coin_game", False), ("storm_np", False)])
def test_the_suites_with_a_renderer_and_only_they_offer_one(name: str, renders: bool) -> None:
    """`rl render` asks `render_suffix`: set exactly where a `render_episode` draws the suite."""
    env = rl_envs.make(f"jaxmarl/{name}")
    assert (env.render_suffix == ".gif") is renders
    assert hasattr(env, "render_episode") is renders

