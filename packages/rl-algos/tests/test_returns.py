"""GAE on small hand-computed examples: gamma = 0.9, lambda = 0.8, so gamma * lambda = 0.72."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from rl_algos.common import gae

GAMMA, LAM = 0.9, 0.8


def _f(x):
    return jnp.asarray(x, jnp.float32)


def _b(x):
    return jnp.asarray(x, jnp.bool_)


def test_no_episode_end() -> None:
    rewards, values, next_values = _f([1, 2, 3]), _f([0.5, 1.0, 1.5]), _f([1.0, 1.5, 2.0])
    adv, targets = gae(rewards, values, next_values, _b([0, 0, 0]), _b([0, 0, 0]), GAMMA, LAM)
    # deltas: 1 + 0.9*1.0 - 0.5 = 1.4;  2 + 0.9*1.5 - 1.0 = 2.35;  3 + 0.9*2.0 - 1.5 = 3.3
    # A2 = 3.3
    # A1 = 2.35 + 0.72 * 3.3   = 2.35 + 2.376   = 4.726
    # A0 = 1.4  + 0.72 * 4.726 = 1.4  + 3.40272 = 4.80272
    np.testing.assert_allclose(adv, [4.80272, 4.726, 3.3], rtol=1e-6)
    # targets = A + V = [5.30272, 5.726, 4.8]
    np.testing.assert_allclose(targets, [5.30272, 5.726, 4.8], rtol=1e-6)
    assert adv.dtype == jnp.float32 and targets.dtype == jnp.float32


# T = 4, an episode ends after step 1; next_values[1] = 7 is the value of the true final
# observation, used only if that end is a truncation.
REWARDS, VALUES, NEXT_VALUES = _f([1, 2, 3, 4]), _f([0.5, 1.0, 1.5, 2.0]), _f([1.0, 7.0, 2.0, 2.5])
END = _b([0, 1, 0, 0])
NO_END = _b([0, 0, 0, 0])


def test_termination_in_the_middle() -> None:
    adv, targets = gae(REWARDS, VALUES, NEXT_VALUES, END, NO_END, GAMMA, LAM)
    # deltas: 1 + 0.9*1.0 - 0.5 = 1.4
    #         2 + 0 (terminated: no bootstrap from 7) - 1.0 = 1.0
    #         3 + 0.9*2.0 - 1.5 = 3.3
    #         4 + 0.9*2.5 - 2.0 = 4.25
    # A3 = 4.25; A2 = 3.3 + 0.72*4.25 = 6.36
    # A1 = 1.0 (nothing passes back from the next episode); A0 = 1.4 + 0.72*1.0 = 2.12
    np.testing.assert_allclose(adv, [2.12, 1.0, 6.36, 4.25], rtol=1e-6)
    np.testing.assert_allclose(targets, [2.62, 2.0, 7.86, 6.25], rtol=1e-6)


def test_truncation_in_the_middle() -> None:
    adv, targets = gae(REWARDS, VALUES, NEXT_VALUES, NO_END, END, GAMMA, LAM)
    # deltas: 1.4; 2 + 0.9*7.0 - 1.0 = 7.3 (bootstrap from the final observation); 3.3; 4.25
    # A3 = 4.25; A2 = 6.36
    # A1 = 7.3 (no advantage from the next episode); A0 = 1.4 + 0.72*7.3 = 1.4 + 5.256 = 6.656
    np.testing.assert_allclose(adv, [6.656, 7.3, 6.36, 4.25], rtol=1e-6)
    np.testing.assert_allclose(targets, [7.156, 8.3, 7.86, 6.25], rtol=1e-6)


def test_batched_columns_are_independent_and_hparams_may_be_traced() -> None:
    # [T, 2]: column 0 terminates after step 1, column 1 truncates there.
    col = lambda x: jnp.stack([x, x], axis=1)  # noqa: E731
    term = jnp.stack([END, NO_END], axis=1)
    trunc = jnp.stack([NO_END, END], axis=1)

    @jax.jit
    def run(gamma, lam):
        return gae(col(REWARDS), col(VALUES), col(NEXT_VALUES), term, trunc, gamma, lam)

    adv, _ = run(jnp.float32(GAMMA), jnp.float32(LAM))
    assert adv.shape == (4, 2)
    np.testing.assert_allclose(adv[:, 0], [2.12, 1.0, 6.36, 4.25], rtol=1e-6)
    np.testing.assert_allclose(adv[:, 1], [6.656, 7.3, 6.36, 4.25], rtol=1e-6)


def test_lambda_zero_is_one_step_td_and_lambda_one_is_monte_carlo() -> None:
    rewards, values, next_values = _f([1, 1]), _f([0, 0]), _f([0, 10])
    term, trunc = _b([0, 1]), _b([0, 0])
    adv0, _ = gae(rewards, values, next_values, term, trunc, 0.5, 0.0)
    # lambda 0: A_t = delta_t: [1 + 0.5*0 - 0, 1 + 0 - 0] = [1, 1]
    np.testing.assert_allclose(adv0, [1.0, 1.0])
    adv1, _ = gae(rewards, values, next_values, term, trunc, 0.5, 1.0)
    # lambda 1: discounted return minus value: [1 + 0.5*1, 1] = [1.5, 1]
    np.testing.assert_allclose(adv1, [1.5, 1.0])


def test_self_play_negates_the_next_players_values() -> None:
    """turn_sign -1 (the next position is the other player's): γ becomes −γ in δ and in the
    advantage's recursion (negamax); all +1 is the ordinary GAE."""
    rewards, values, next_values = _f([0, 0, 1]), _f([0.1, 0.2, 0.3]), _f([0.2, 0.3, 0.0])
    term, trunc, sign = _b([0, 0, 1]), _b([0, 0, 0]), _f([-1, -1, -1])
    adv, _ = gae(rewards, values, next_values, term, trunc, GAMMA, LAM, sign)
    # deltas: 0 - 0.9*0.2 - 0.1 = -0.28;  0 - 0.9*0.3 - 0.2 = -0.47;  1 - 0.3 = 0.7 (terminal)
    # A2 = 0.7;  A1 = -0.47 - 0.72*0.7 = -0.974;  A0 = -0.28 - 0.72*(-0.974) = 0.42128
    np.testing.assert_allclose(adv, [0.42128, -0.974, 0.7], rtol=1e-5)
    same, _ = gae(rewards, values, next_values, term, trunc, GAMMA, LAM, _f([1, 1, 1]))
    plain, _ = gae(rewards, values, next_values, term, trunc, GAMMA, LAM)
    np.testing.assert_allclose(same, plain, rtol=1e-6)


def test_self_play_q_lambda_returns_negate_the_opponents_q() -> None:
    from rl_algos.common.qvalues import q_lambda_returns

    # λ = 0: one-step targets r + γ·sign·(1 − terminated)·max Q(s').
    rewards, q_max = _f([0, 0, 1]), _f([0.5, -0.25, 0.0])
    term, trunc, sign = _b([0, 0, 1]), _b([0, 0, 0]), _f([-1, -1, -1])
    g = q_lambda_returns(rewards, q_max, term, trunc, GAMMA, 0.0, sign)
    np.testing.assert_allclose(g, [-0.45, 0.225, 1.0], rtol=1e-6)
    # λ = 1: the game's outcome from each mover's view, discounted: +1 for the winner's move,
    # −γ for the loser's before it, +γ² for the winner's before that.
    g = q_lambda_returns(rewards, q_max, term, trunc, GAMMA, 1.0, sign)
    np.testing.assert_allclose(g, [0.81, -0.9, 1.0], rtol=1e-6)


def test_self_play_signs_mix_and_truncation_bootstraps_with_the_sign() -> None:
    """A pass to oneself (+1) between hand-overs (-1), and a game cut by a move limit: the
    truncated step bootstraps from −γ·V(s') and passes no advantage back across the cut."""
    rewards, values = _f([0, 0, 0, 0]), _f([0.1, 0.2, 0.3, 0.4])
    next_values = _f([0.2, 0.3, 0.5, 0.6])
    term, trunc, sign = _b([0, 0, 0, 0]), _b([0, 1, 0, 0]), _f([1, -1, -1, 1])
    adv, _ = gae(rewards, values, next_values, term, trunc, GAMMA, LAM, sign)
    # deltas: 0.9*0.2 - 0.1 = 0.08;  -0.9*0.3 - 0.2 = -0.47;  -0.9*0.5 - 0.3 = -0.75;
    #         0.9*0.6 - 0.4 = 0.14
    # A3 = 0.14;  A2 = -0.75 + (-0.72)*0.14 = -0.8508;  A1 = -0.47 (truncated: no carry);
    # A0 = 0.08 + 0.72*(-0.47) = -0.2584
    np.testing.assert_allclose(adv, [-0.2584, -0.47, -0.8508, 0.14], rtol=1e-5)
