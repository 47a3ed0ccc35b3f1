"""rollout (shapes, true next observations across episode ends) and the update loops on a toy
algorithm whose result is known in closed form."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rl_core import (
    Algorithm,
    AutoReset,
    EpisodeStatistics,
    VectorEnv,
    any_member,
    chunk_length,
    compile_members,
    make_train,
    map_members,
    rollout,
    run_members,
    scan_updates,
)

KEY = jax.random.PRNGKey(3)


def test_rollout_shapes_and_true_next_observation(make_counter_env) -> None:
    n_envs, n_steps = 2, 7
    venv = VectorEnv(AutoReset(EpisodeStatistics(make_counter_env(terminate_at=3))), n_envs)

    def policy(ts, key):
        action = jnp.ones(ts.reward.shape, jnp.int32)  # reward 1 + 1 = 2 every step
        return action, {"value": ts.observation[:, 0] * 10.0}

    @jax.jit
    def run(key):
        state, ts = venv.reset(key)
        return rollout(venv, policy, state, ts, key, n_steps)

    (_, last_ts, _), traj = run(KEY)
    assert traj.observation.shape == (n_steps, n_envs, 2)
    assert traj.next_observation.shape == (n_steps, n_envs, 2)
    for leaf in (traj.action, traj.reward, traj.terminated, traj.truncated):
        assert leaf.shape == (n_steps, n_envs)
    assert traj.extras["value"].shape == (n_steps, n_envs)
    assert traj.info["episode_return"].shape == (n_steps, n_envs)
    assert "final_observation" not in traj.info
    np.testing.assert_array_equal(traj.reward, np.full((n_steps, n_envs), 2.0))

    obs, nxt = np.asarray(traj.observation), np.asarray(traj.next_observation)
    # Episodes last 3 steps: steps 0, 1, 2 | 3, 4, 5 | 6 (0-based); they end at indices 2 and 5.
    np.testing.assert_array_equal(traj.terminated[:, 0], [0, 0, 1, 0, 0, 1, 0])
    np.testing.assert_array_equal(obs[:, 0, 0], [0, 1, 2, 0, 1, 2, 0])
    # next_observation is the true successor: t + 1, i.e. 3 (the final observation) on the
    # ending steps, not 0 (the reset observation the agent sees next).
    np.testing.assert_array_equal(nxt[:, 0, 0], [1, 2, 3, 1, 2, 3, 1])
    np.testing.assert_array_equal(nxt[2, :, 1], obs[2, :, 1])  # same episode's offset
    # On ending steps the next observation is not the next step's observation ...
    assert not np.array_equal(nxt[2], obs[3])
    # ... while on every other step it is.
    for t in (0, 1, 3, 4):
        np.testing.assert_array_equal(nxt[t], obs[t + 1])
    np.testing.assert_array_equal(nxt[6], last_ts.observation)
    # The policy's extras are stored per step: value = 10 * t of the acting observation.
    np.testing.assert_array_equal(traj.extras["value"][:, 0], [0, 10, 20, 0, 10, 20, 0])
    # Episode returns in info: running sums of 2 per step.
    np.testing.assert_array_equal(traj.info["episode_return"][:, 1], [2, 4, 6, 2, 4, 6, 2])


@pytest.mark.parametrize("with_mask", [False, True])
def test_rollout_with_precomputed_resets_is_the_same_rollout(make_counter_env, with_mask) -> None:
    """`precompute_resets` computes the same resets ahead (the counter's reset draws a random
    offset, and a mask follows the new episode's state), so the whole rollout is identical."""
    venv = VectorEnv(AutoReset(EpisodeStatistics(make_counter_env(
        terminate_at=3, with_mask=with_mask))), 3)

    def policy(ts, key):
        return jax.random.randint(key, ts.reward.shape, 0, 3), {}

    @jax.jit
    def run(key):
        state, ts = venv.reset(key)
        return [rollout(venv, policy, state, ts, key, 11, precompute_resets=p)
                for p in (False, True)]

    ref, pre = run(KEY)
    assert bool(jnp.any(ref[1].terminated))  # episodes did end (and reset) inside the rollout
    offsets = np.asarray(ref[1].observation[..., 1])
    assert len(np.unique(offsets)) > 3  # the resets are random
    assert jax.tree.structure(ref) == jax.tree.structure(pre)
    for a, b in zip(jax.tree.leaves(ref), jax.tree.leaves(pre), strict=True):
        np.testing.assert_array_equal(a, b)


def test_precomputed_resets_need_autoreset_under_the_vector_env(make_counter_env) -> None:
    venv = VectorEnv(EpisodeStatistics(make_counter_env(terminate_at=3)), 2)
    state, ts = venv.reset(KEY)
    with pytest.raises(ValueError, match="AutoReset directly under its VectorEnv"):
        rollout(venv, lambda ts, k: (jnp.zeros(2, jnp.int32), {}), state, ts, KEY, 2,
                precompute_resets=True)


# A toy algorithm: carry = (value, count); each update adds hparams to value and reports the
# value before the update. After n updates value = init + n * hp.
def _toy_algorithm(num_updates: int) -> Algorithm:
    def init(key, hp):
        return {"value": jax.random.uniform(key, ()), "count": jnp.zeros((), jnp.int32)}

    def update(carry, hp):
        new = {"value": carry["value"] + hp, "count": carry["count"] + 1}
        return new, {"before": carry["value"], "count": new["count"].astype(jnp.float32)}

    return Algorithm(init, update, num_updates, steps_per_update=10)


def test_make_train_and_scan_updates() -> None:
    algo = _toy_algorithm(6)
    train = jax.jit(make_train(algo))
    res = train(KEY, jnp.float32(0.5))
    v0 = float(algo.init(KEY, 0.5)["value"])
    # 6 updates of +0.5: v0 + 3.
    np.testing.assert_allclose(res.state["value"], v0 + 3.0, rtol=1e-6)
    assert int(res.state["count"]) == 6
    np.testing.assert_allclose(res.metrics["before"], v0 + 0.5 * np.arange(6), rtol=1e-6)
    np.testing.assert_array_equal(res.metrics["count"], [1, 2, 3, 4, 5, 6])
    carry, metrics = scan_updates(algo, algo.init(KEY, 0.5), jnp.float32(1.0), 2)
    np.testing.assert_allclose(carry["value"], v0 + 2.0, rtol=1e-6)
    assert metrics["before"].shape == (2,)


def test_run_members_matches_vmapped_train_and_reports_every_chunk() -> None:
    algo = _toy_algorithm(6)
    keys = jax.random.split(KEY, 3)
    hp = jnp.array([0.5, 1.0, -2.0], jnp.float32)
    compiled = compile_members(algo, keys, hp, chunk_len=2)
    assert compiled.num_chunks == 3 and compiled.chunk_len == 2
    assert compiled.compile_seconds > 0
    reports = []
    res = run_members(compiled, keys, hp, on_chunk=reports.append)
    ref = jax.jit(jax.vmap(make_train(algo)))(keys, hp)
    np.testing.assert_array_equal(res.state["value"], ref.state["value"])
    np.testing.assert_array_equal(res.state["count"], [6, 6, 6])
    for k in ref.metrics:
        assert res.metrics[k].shape == (3, 6)
        np.testing.assert_array_equal(res.metrics[k], ref.metrics[k])
    assert [r.chunk for r in reports] == [0, 1, 2]
    assert [r.updates_done for r in reports] == [2, 4, 6]
    assert all(r.num_chunks == 3 and r.metrics["count"].shape == (3, 2) for r in reports)
    np.testing.assert_array_equal(reports[1].metrics["count"][0], [3, 4])


def test_map_members_runs_one_member_unbatched_with_the_same_results() -> None:
    algo = _toy_algorithm(4)
    train = make_train(algo)
    for m in (1, 3):
        keys, hp = jax.random.split(KEY, m), jnp.linspace(-1.0, 1.0, m, dtype=jnp.float32)
        out = jax.jit(map_members(train))(keys, hp)
        ref = jax.jit(jax.vmap(train))(keys, hp)
        for a, b in zip(jax.tree.leaves(out), jax.tree.leaves(ref), strict=True):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-6)
        # the member's arithmetic runs on scalars for one member, on the `[m]` batch otherwise
        jaxpr = jax.make_jaxpr(map_members(lambda h: h * 2.0))(hp)
        (mul,) = [e for e in jaxpr.eqns if e.primitive.name == "mul"]
        assert mul.invars[0].aval.shape == (() if m == 1 else (m,))


def test_any_member_is_the_members_or_under_vmap_and_keeps_a_cond_a_branch() -> None:
    assert not bool(any_member(jnp.array(False))) and bool(any_member(jnp.array(True)))
    np.testing.assert_array_equal(jax.vmap(any_member)(jnp.array([False, True, False])),
                                  [True, True, True])
    np.testing.assert_array_equal(jax.vmap(any_member)(jnp.array([False, False])),
                                  [False, False])
    # Nested member axes (seeds of grid points): the OR over both.
    np.testing.assert_array_equal(
        jax.vmap(jax.vmap(any_member))(jnp.array([[False, False], [False, True]])),
        [[True, True], [True, True]])

    def f(x):
        return jax.lax.cond(any_member(x > 0), lambda: x * 2.0, lambda: x)

    jaxpr = str(jax.make_jaxpr(jax.vmap(f))(jnp.ones(3)))
    assert " cond[" in jaxpr and "select_n" not in jaxpr
    np.testing.assert_array_equal(jax.jit(jax.vmap(f))(jnp.array([-1.0, 2.0])), [-2.0, 4.0])


def test_compile_members_rejects_a_chunk_that_does_not_divide() -> None:
    algo = _toy_algorithm(6)
    with pytest.raises(ValueError, match="must divide"):
        compile_members(algo, jax.random.split(KEY, 2), jnp.ones(2), chunk_len=4)


@pytest.mark.parametrize(
    "num_updates,target,expected",
    [
        (976, 50, 16),  # limit 976 // 50 = 19; 976 = 2^4 * 61 -> largest divisor <= 19 is 16
        (100, 50, 2),  # limit 2
        (7, 50, 1),  # limit max(1, 0) = 1
        (122, 1, 122),  # one chunk: the whole run
        (97, 10, 1),  # 97 is prime, limit 9 -> only 1 divides
        (10**9, 50, 2 * 10**7),  # a long run: the divisors are listed to sqrt(n), not to n/50
        (2**31 - 1, 50, 1),  # the largest update count: a prime
        (2 * 3 * 7 * 10007, 50, 42),  # limit 8405: every divisor but 2*3*7 carries 10007
    ],
)
def test_chunk_length(num_updates: int, target: int, expected: int) -> None:
    got = chunk_length(num_updates, target)
    assert got == expected and num_updates % got == 0


def test_chunk_health_flags_the_first_non_finite_update_and_parameters() -> None:
    """Member 0 stays finite; member 1's metric turns NaN at its 4th update (`value` passes the
    threshold at update 3 and is `log`ged below zero); member 2's agent parameter overflows to
    inf at update 5, its metrics staying finite. The health comes from reductions inside the
    compiled chunk; the carry and metrics are the same as without it."""

    def init(key, hp):
        return {"value": jnp.zeros(()), "count": jnp.zeros((), jnp.int32)}

    def update(carry, hp):
        count = carry["count"] + 1
        value = jnp.where(count >= 5, hp * 1e38, carry["value"] + 1.0)  # hp 10: inf at update 5
        bad = jnp.where((hp < 0) & (count >= 4), jnp.log(hp), 0.0)  # hp < 0: NaN from update 4
        return {"value": value, "count": count}, {"m": bad, "count": count.astype(jnp.float32)}

    algo = Algorithm(init, update, 6, steps_per_update=1,
                     agent=lambda c: {"w": c["value"]})
    keys = jax.random.split(KEY, 3)
    hp = jnp.array([1e-38, -1.0, 10.0], jnp.float32)
    compiled = compile_members(algo, keys, hp, chunk_len=2)
    reports = []
    res = run_members(compiled, keys, hp, on_chunk=reports.append)
    first = np.stack([r.health["first_nonfinite_update"] for r in reports])  # [chunk, member]
    params_ok = np.stack([r.health["params_finite"] for r in reports])
    np.testing.assert_array_equal(first, [[-1, -1, -1], [-1, 1, -1], [-1, 0, -1]])
    np.testing.assert_array_equal(params_ok, [[1, 1, 1], [1, 1, 1], [1, 1, 0]])
    ref = jax.jit(jax.vmap(make_train(algo)))(keys, hp)
    np.testing.assert_array_equal(res.state["value"], ref.state["value"])
    np.testing.assert_array_equal(res.metrics["m"], ref.metrics["m"])
