"""Statistics for reporting, from SciPy: the mean's Student-t interval, the interquartile mean, a
bootstrap interval and a proportion's Wilson interval; Bradley–Terry ratings of players from
their matches; and the one definition of a run's final return (from rl_core)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

# SciPy and rl_core (hence JAX) are imported where used: `rl --help` imports this module.

__all__ = ["GAME_OUTCOMES", "bootstrap_ci95", "bradley_terry_elo", "final_achievements",
           "final_returns", "final_win_rates", "finite_or_none", "game_outcome_rates", "iqm",
           "mean_ci95", "wilson_ci95"]

# The outcomes of a two-player game, in the order they are reported (`game_outcome_rates`).
GAME_OUTCOMES = ("win_rate", "draw_rate", "loss_rate")


def finite_or_none(x: object) -> float | None:
    """`x` as a float for JSON, None (JSON's null) where it is NaN or infinite."""
    v = float(x)  # type: ignore[arg-type]
    return v if math.isfinite(v) else None


def final_returns(return_sum: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Per member, the final return (`rl_core.final_return`, the one definition): `[M, U]`
    per-update sums and counts -> `[M]`, NaN where no episode ended in the window."""
    from rl_core import final_return

    return np.asarray(final_return(np.asarray(return_sum), np.asarray(count)))


def game_outcome_rates(returns: np.ndarray) -> dict[str, np.ndarray]:
    """Per member, the share of a two-player game's episodes won (return > 0), drawn (= 0) and
    lost (< 0), the sign being the outcome of a pgx game (+1 a win, -1 a loss, 0 a draw):
    `returns [M, N]` -> `{"win_rate", "draw_rate", "loss_rate"}` each `[M]`, over all N
    episodes (an unfinished one, NaN, counts as none of the three)."""
    returns = np.asarray(returns, np.float64)
    with np.errstate(invalid="ignore"):
        return {k: np.sum(f(returns, 0.0), axis=1) / returns.shape[1]
                for k, f in zip(GAME_OUTCOMES, (np.greater, np.equal, np.less), strict=True)}


def final_win_rates(metrics: dict[str, np.ndarray]) -> dict[str, object]:
    """A run's summary of wins, where its environment reports them (`episode_won_sum`: SMAX):
    per member the fraction of the episodes ending in the final-return window that were won
    (`final_returns`' window over the per-update win counts), their mean and its 95% interval;
    nothing for an environment without wins."""
    if "episode_won_sum" not in metrics:
        return {}
    rates = final_returns(np.asarray(metrics["episode_won_sum"]),
                          np.asarray(metrics["episode_count"]))
    mean, ci = mean_ci95(rates)
    return {"final_win_rate_per_member": [finite_or_none(r) for r in rates],
            "final_win_rate_mean": finite_or_none(mean),
            "final_win_rate_ci95": finite_or_none(ci)}


def final_achievements(metrics: dict[str, np.ndarray], env: object) -> dict[str, object]:
    """A run's achievement summary, where its environment reports achievements (Craftax:
    `episode_achievements_sum` `[M, U, K]`, and `achievement_names`, `max_achievement_return`):
    each achievement's success rate over the episodes of the final-return window (the members'
    mean), and the score of the Craftax paper, the final return as a percentage of the maximum
    return, per member with its mean and 95% interval. Nothing for other environments."""
    if "episode_achievements_sum" not in metrics:
        return {}
    count = np.asarray(metrics["episode_count"])
    unlocks = np.moveaxis(np.asarray(metrics["episode_achievements_sum"]), -1, 1)  # [M, K, U]
    per_member = final_returns(unlocks, count[:, None, :])  # [M, K], NaN: no episode ended
    ended = np.isfinite(per_member)
    with np.errstate(invalid="ignore"):
        rates = np.where(ended, per_member, 0.0).sum(0) / ended.sum(0)  # NaN where none ended
    names = getattr(env, "achievement_names", None) or [str(k) for k in range(len(rates))]
    out: dict[str, object] = {"final_achievement_rates": {
        n: finite_or_none(r) for n, r in zip(names, rates, strict=True)}}
    best = getattr(env, "max_achievement_return", None)
    if best:
        scores = 100.0 * final_returns(np.asarray(metrics["episode_return_sum"]), count) / best
        mean, ci = mean_ci95(scores)
        out.update({"final_score_pct_per_member": [finite_or_none(s) for s in scores],
                    "final_score_pct_mean": finite_or_none(mean),
                    "final_score_pct_ci95": finite_or_none(ci)})
    return out


def _finite(values: np.ndarray) -> np.ndarray:
    v = np.asarray(values, np.float64).ravel()
    return v[np.isfinite(v)]


def mean_ci95(values: np.ndarray) -> tuple[float, float]:
    """Mean of the finite values and the half-width of its two-sided 95% confidence interval
    (Student t with n − 1 degrees of freedom: the quantile `scipy.special.stdtrit(n − 1, 0.975)`,
    the same number as `scipy.stats.t.ppf(0.975, n − 1)` from the light `scipy.special` instead
    of `scipy.stats`, about a second to import; 0 for one value, NaN for none)."""
    v = _finite(values)
    if v.size == 0:
        return math.nan, math.nan
    if v.size == 1:
        return float(v[0]), 0.0
    from scipy import special

    t = float(special.stdtrit(v.size - 1, 0.975))
    return float(v.mean()), float(t * v.std(ddof=1) / math.sqrt(v.size))


def iqm(values: np.ndarray) -> float:
    """Interquartile mean of the finite values (the mean of the middle 50%, 25% cut from each
    end, `scipy.stats.trim_mean(v, 0.25)`; Agarwal et al., NeurIPS 2021): robust to a few
    outlying seeds, less noisy than the median. NaN for no values."""
    from scipy import stats

    v = _finite(values)
    return float(stats.trim_mean(v, 0.25)) if v.size else math.nan


def bootstrap_ci95(values: np.ndarray, statistic: Callable[[np.ndarray], float] = np.mean,
                   n_resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """Two-sided 95% percentile-bootstrap confidence interval `(low, high)` of `statistic` over
    the finite values (`scipy.stats.bootstrap`, resampling seeds with replacement). The random
    state is fixed (`seed`), so the same values always give the same interval. One value gives
    `(s, s)`; none gives NaNs."""
    v = _finite(values)
    if v.size == 0:
        return math.nan, math.nan
    if v.size == 1 or np.all(v == v[0]):
        s = float(statistic(v))
        return s, s
    from scipy import stats

    res = stats.bootstrap((v,), lambda x: float(statistic(x)), n_resamples=n_resamples,
                          confidence_level=0.95, method="percentile", vectorized=False,
                          random_state=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def wilson_ci95(successes: int, n: int) -> tuple[float, float]:
    """The Wilson score 95% interval `(low, high)` of a proportion, `successes` of `n` trials
    (Wilson, 1927; `scipy.stats.binomtest`): unlike the normal approximation it stays inside
    [0, 1] and is not empty at 0 or n successes. (nan, nan) for n = 0."""
    if n <= 0:
        return math.nan, math.nan
    from scipy import stats

    ci = stats.binomtest(int(successes), int(n)).proportion_ci(0.95, method="wilson")
    return float(ci.low), float(ci.high)


def bradley_terry_elo(score: np.ndarray, games: np.ndarray, anchor: int = 0,
                      iterations: int = 10_000) -> np.ndarray:
    """Ratings `[P]` on the Elo scale of players who met in matches: `score[i, j]` is what i
    scored against j (a win 1, a draw 1/2) in `games[i, j]` games (symmetric). The Bradley–Terry
    model P(i beats j) = π_i / (π_i + π_j) (Bradley and Terry, 1952) is fitted by its
    minorise-maximise iteration (Hunter, 2004) with one virtual draw added to every pair that
    met, so that a player who won every game still has a finite rating; the ratings are
    400·log10(π_i / π_anchor), so `anchor` is 0 and 400 points are odds of 10 to 1."""
    score = np.asarray(score, np.float64)
    games = np.asarray(games, np.float64)
    met = games > 0
    wins = (score + 0.5 * met).sum(axis=1)
    n = games + met
    pi = np.ones(len(score))
    for _ in range(iterations):
        new = wins / np.where(met, n / (pi[:, None] + pi[None, :]), 0.0).sum(axis=1)
        new /= np.exp(np.mean(np.log(new)))
        done = np.max(np.abs(new - pi)) < 1e-12
        pi = new
        if done:
            break
    return 400.0 * np.log10(pi / pi[anchor])
