"""Small statistics for reporting: final returns and confidence intervals."""

from __future__ import annotations

import math

import numpy as np

# Two-sided 95% Student-t critical values for 1..30 degrees of freedom.
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def mean_ci95(values: np.ndarray) -> tuple[float, float]:
    """Mean and the half-width of its 95% confidence interval (Student t; 0 for one value)."""
    v = np.asarray(values, np.float64)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan
    if v.size == 1:
        return float(v[0]), 0.0
    t = _T95[v.size - 2] if v.size - 1 <= len(_T95) else 1.96
    return float(v.mean()), float(t * v.std(ddof=1) / math.sqrt(v.size))


def final_returns(return_sum: np.ndarray, count: np.ndarray, fraction: float = 0.05) -> np.ndarray:
    """Per member, the mean undiscounted return of the episodes that finished during the last
    `fraction` of updates (at least one update): `[M, U]` sums and counts -> `[M]` (NaN where no
    episode finished in that window)."""
    window = max(1, int(round(return_sum.shape[1] * fraction)))
    s, c = return_sum[:, -window:].sum(axis=1), count[:, -window:].sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(c > 0, s / np.maximum(c, 1), np.nan)
