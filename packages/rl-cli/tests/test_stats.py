"""The reporting statistics against hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rl_cli.stats import (
    bootstrap_ci95,
    bradley_terry_elo,
    final_returns,
    final_win_rates,
    iqm,
    mean_ci95,
    wilson_ci95,
)


def test_mean_ci95_uses_student_t_with_n_minus_1_degrees_of_freedom() -> None:
    # [0, 2]: mean 1, sample std sqrt(2), half-width t(0.975, 1) * sqrt(2) / sqrt(2) = 12.7062.
    assert mean_ci95(np.array([0.0, 2.0])) == pytest.approx((1.0, 12.7062), abs=1e-4)
    # 40 values 0, 1, 0, 1, ...: mean 0.5, sample std sqrt(10/39); t(0.975, 39) = 2.02269, not
    # the normal 1.96 that a table ending at 30 degrees of freedom fell back to.
    v = np.tile([0.0, 1.0], 20)
    half = 2.02269 * math.sqrt(10 / 39) / math.sqrt(40)
    assert mean_ci95(v) == pytest.approx((0.5, half), rel=1e-5)


def test_mean_ci95_quantile_is_scipy_stats_t_ppf_exactly() -> None:
    # mean_ci95 takes the t quantile from scipy.special (stdtrit), not scipy.stats (seconds to
    # import): the very same numbers, bit for bit, at every sample size a run reports.
    from scipy import special, stats

    for df in [*range(1, 1001), 4095, 65535, 10**6]:
        assert special.stdtrit(df, 0.975) == stats.t.ppf(0.975, df), df
    rng = np.random.default_rng(0)
    for n in (2, 3, 8, 64, 1000):
        v = rng.normal(size=n)
        t = stats.t.ppf(0.975, n - 1)
        assert mean_ci95(v) == (float(v.mean()), float(t * v.std(ddof=1) / math.sqrt(n)))


def test_mean_ci95_edges() -> None:
    assert mean_ci95(np.array([3.0])) == (3.0, 0.0)
    assert mean_ci95(np.array([3.0, np.nan, 5.0]))[0] == 4.0  # non-finite values are left out
    assert all(math.isnan(x) for x in mean_ci95(np.array([np.nan])))


def test_iqm_is_the_mean_of_the_middle_half() -> None:
    # 8 values: cut 2 from each end, mean of 3, 4, 5, 6 = 4.5; the outlier does not move it.
    assert iqm(np.array([1.0, 2, 3, 4, 5, 6, 7, 8])) == 4.5
    assert iqm(np.array([100.0, 2, 3, 4, 5, 6, 7, -50])) == 4.5
    assert math.isnan(iqm(np.array([])))


def test_bootstrap_ci95_percentile_interval() -> None:
    # [0, 0, 0, 1]: a resample's mean is k/4 with k ~ Binomial(4, 1/4), whose CDF is 0.316,
    # 0.738, 0.949, 0.996, 1 at k = 0..4, so the 2.5% and 97.5% points are 0 and 3/4.
    assert bootstrap_ci95(np.array([0.0, 0.0, 0.0, 1.0])) == (0.0, 0.75)
    # [0, 1]: the mean is 0, 1/2 or 1 with probabilities 1/4, 1/2, 1/4: the interval is [0, 1].
    assert bootstrap_ci95(np.array([0.0, 1.0])) == (0.0, 1.0)
    assert bootstrap_ci95(np.array([7.0])) == (7.0, 7.0)
    v = np.array([1.0, 2, 3, 4, 5, 6, 7, 100])
    assert bootstrap_ci95(v) == bootstrap_ci95(v)  # fixed random state: reproducible
    low, high = bootstrap_ci95(v, iqm)
    assert 2.0 <= low <= 4.5 <= high <= 100.0


def test_final_returns_is_the_last_5_percent_of_updates() -> None:
    # 40 updates: the window is 2 updates. Member 0 ended episodes of return 10 (x3) and 40 (x1)
    # in them: (30 + 40) / 4 = 17.5; member 1 ended none there: NaN.
    sums = np.zeros((2, 40), np.float32)
    counts = np.zeros((2, 40), np.float32)
    sums[:, 37], counts[:, 37] = 1000.0, 1.0  # just outside the window
    sums[0, 38], counts[0, 38] = 30.0, 3.0
    sums[0, 39], counts[0, 39] = 40.0, 1.0
    out = final_returns(sums, counts)
    assert isinstance(out, np.ndarray)
    assert out[0] == 17.5 and math.isnan(out[1])


def test_wilson_ci95_matches_the_closed_form_and_stays_in_bounds() -> None:
    z = 1.959963984540054
    for k, n in ((0, 10), (3, 10), (10, 10), (57, 400)):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        low, high = wilson_ci95(k, n)
        np.testing.assert_allclose([low, high], [centre - half, centre + half], atol=1e-12)
        assert 0.0 <= low <= p <= high <= 1.0
    assert high - low < wilson_ci95(6, 40)[1] - wilson_ci95(6, 40)[0]  # narrower with more games
    assert all(np.isnan(wilson_ci95(0, 0)))


def test_bradley_terry_elo_recovers_ratings_and_stays_finite() -> None:
    true = np.array([0.0, 150.0, 400.0, -200.0])
    games = np.full((4, 4), 20_000.0)
    np.fill_diagonal(games, 0.0)
    p = 1.0 / (1.0 + 10 ** ((true[None, :] - true[:, None]) / 400.0))  # P(i beats j)
    elo = bradley_terry_elo(p * games, games, anchor=0)
    np.testing.assert_allclose(elo, true, atol=2.0)  # the virtual draws pull in a little
    assert elo[0] == 0.0
    # A player who won every game gets a high but finite rating, above the one it beat.
    score = np.array([[0.0, 100.0], [0.0, 0.0]])
    elo = bradley_terry_elo(score, np.array([[0.0, 100.0], [100.0, 0.0]]), anchor=1)
    assert np.isfinite(elo).all() and elo[0] > 600 and elo[1] == 0.0


def test_final_win_rates_are_the_won_fraction_of_the_final_windows_episodes() -> None:
    """Two members, 40 updates (the final window: the last 2): member 0 won 3 of the 4 episodes
    that ended there, member 1 none of 2; an environment without wins reports nothing."""
    from rl_cli.reporting import summarise_chunk

    count = np.zeros((2, 40), np.float32)
    won = np.zeros((2, 40), np.float32)
    count[0, -2:], won[0, -2:] = [1, 3], [1, 2]
    count[1, -1], won[0, 0], count[0, 0] = 2, 5, 5  # wins outside the window do not count
    res = final_win_rates({"episode_won_sum": won, "episode_count": count})
    assert res["final_win_rate_per_member"] == [0.75, 0.0]
    assert res["final_win_rate_mean"] == pytest.approx(0.375)
    assert final_win_rates({"episode_count": count}) == {}
    chunk = summarise_chunk({"episode_return_sum": won, "episode_length_sum": count,
                             "episode_count": count, "episode_won_sum": won})
    assert chunk["win_rate"] == pytest.approx(np.mean([8 / 9, 0.0]))  # the whole chunk


def test_achievement_rates_over_finished_episodes_and_the_score_as_a_share_of_the_max() -> None:
    """Craftax's achievements: two members, 40 updates (the final window: the last 2). Member 0
    ended 4 episodes there (2 unlocked achievement a, 1 unlocked b; return 11 in all), member 1
    ended 2 (both unlocked a; return 4). Rates are the members' mean of their own shares; the
    score is the final return over the maximum return, in percent; a chunk pools its members."""
    from rl_cli.reporting import summarise_chunk
    from rl_cli.stats import final_achievements

    class Env:
        achievement_names = ["a", "b"]
        max_achievement_return = 10.0

    count = np.zeros((2, 40), np.float32)
    ret = np.zeros((2, 40), np.float32)
    unlocks = np.zeros((2, 40, 2), np.float32)
    count[0, -2:], ret[0, -2:], unlocks[0, -1] = [1, 3], [3, 8], [2, 1]
    count[1, -1], ret[1, -1], unlocks[1, -1] = 2, 4, [2, 0]
    count[1, 0], unlocks[1, 0] = 5, [0, 5]  # outside the window: not counted
    metrics = {"episode_count": count, "episode_return_sum": ret,
               "episode_achievements_sum": unlocks}
    res = final_achievements(metrics, Env())
    assert res["final_achievement_rates"] == {"a": pytest.approx((0.5 + 1.0) / 2),
                                              "b": pytest.approx(0.25 / 2)}
    assert res["final_score_pct_per_member"] == [pytest.approx(27.5), pytest.approx(20.0)]
    assert res["final_score_pct_mean"] == pytest.approx(23.75)
    assert final_achievements({"episode_count": count}, Env()) == {}
    chunk = summarise_chunk({**metrics, "episode_length_sum": count})
    np.testing.assert_allclose(chunk["achievement_rates"], [4 / 11, 6 / 11])
    assert "episode_achievements_sum" not in chunk
