"""The one definition of an agent's "final return", shared by `rl run`, `rl sweep`, `rl evolve`'s
fitness, the learning gates and the tools.

Every `update` reports the sums of its finished episodes (`EPISODE_METRICS`); a run's metrics hold
them per update, `[..., U]`. The final return is computed from these and nothing else, so it is
the same number in a summary, a sweep ranking, an evolution's fitness and a test's threshold.
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
import numpy as np

# Why the last 5% of updates: the final return should describe the policy a run ends with (the
# agent it saves and `rl eval` plays), not an average over its learning curve, so the window is
# short; yet it must hold many episodes from every environment of the vectorised batch, or one
# lucky or unlucky episode decides it. With the presets' budgets (hundreds to tens of thousands of
# updates, 4 to 128 environments each) 5% is tens of updates and tens to hundreds of episodes; a
# run of fewer than 20 updates still gets its last update. Every result quoted in docs/ is
# measured with this window; change it and those tables no longer describe the code.
FINAL_RETURN_WINDOW = 0.05

FINAL_RETURN_DEFINITION = (f"mean undiscounted return of the episodes that ended in the last "
                           f"{FINAL_RETURN_WINDOW:.0%} of updates")


def final_return(return_sum: Any, count: Any, window: float = FINAL_RETURN_WINDOW) -> Any:
    """Mean undiscounted return of the episodes that ended during the last `window` fraction of
    updates (at least one update), from per-update sums and counts `[..., U]` -> `[...]`; NaN
    where no episode ended in the window.

    NumPy arrays in give a NumPy array out (host-side summaries); anything else is computed with
    `jax.numpy`, so the same function runs inside a compiled program (evolution's fitness)."""
    xp: Any = np if isinstance(return_sum, np.ndarray) and isinstance(count, np.ndarray) else jnp
    if not 0 < window <= 1:
        raise ValueError(f"the final-return window is a fraction in (0, 1], got {window}")
    w = max(1, int(round(count.shape[-1] * window)))
    s = return_sum[..., -w:].sum(-1)
    c = count[..., -w:].sum(-1)
    if xp is np:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(c > 0, s / np.maximum(c, 1), np.nan)
    return jnp.where(c > 0, s / jnp.maximum(c, 1), jnp.nan)
