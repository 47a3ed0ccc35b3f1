"""The standard wrapper stack the algorithms train on, built once here."""

from __future__ import annotations

from typing import Any

from rl_core import (
    AgentsAsBatch,
    AnnealedRewardShaping,
    AutoReset,
    Box,
    CentralisedCritic,
    ClipAction,
    EpisodeStatistics,
    FlattenObservation,
    NormalizeObservation,
    NormalizeReward,
    OptimisticResetVectorEnv,
    VectorEnv,
)


def make_vector_env(
    env: Any,
    num_envs: int,
    *,
    flatten: bool = True,
    normalize_observations: bool = False,
    normalize_rewards: bool = False,
    reward_gamma: float = 0.99,
    shaping_steps: float = 0.0,
) -> Any:
    """env -> EpisodeStatistics -> AutoReset -> VectorEnv -> [AnnealedRewardShaping] ->
    [AgentsAsBatch] -> [Flatten] ->
    [NormObs] -> [NormRew] -> [ClipAction for Box actions]. Episode statistics record the raw
    reward (they sit below the normalisers), so reported returns are always the environment's own.
    A multi-agent environment (`num_agents`) is seen as its agents batched: the stack's
    `num_envs` is then `num_envs * num_agents` actors, each with its own return. An environment
    that declares `optimistic_reset_ratio` (its reset costs many steps: Craftax's world
    generation) is vectorised with `OptimisticResetVectorEnv` in place of
    `VectorEnv(AutoReset(...))`: `num_envs / ratio` resets per step instead of one per
    environment. `shaping_steps > 0` trains on the environment's shaping reward annealed away
    over that many steps of the stack (`AnnealedRewardShaping`)."""
    ratio = getattr(env, "optimistic_reset_ratio", None)  # an environment whose reset is dear
    venv: Any = (OptimisticResetVectorEnv(EpisodeStatistics(env), num_envs, min(ratio, num_envs))
                 if ratio else VectorEnv(AutoReset(EpisodeStatistics(env)), num_envs))
    if shaping_steps > 0:
        _require_shaping(env)
        venv = AnnealedRewardShaping(venv, shaping_steps)
    if getattr(env, "num_agents", None) is not None:
        venv = AgentsAsBatch(venv)
    if flatten and not (isinstance(env.observation_space, Box)
                        and len(env.observation_space.shape) == 1):
        venv = FlattenObservation(venv)
    if normalize_observations:
        venv = NormalizeObservation(venv)
    if normalize_rewards:
        venv = NormalizeReward(venv, gamma=reward_gamma)
    if isinstance(env.action_space, Box):
        venv = ClipAction(venv)
    return venv


def _require_shaping(env: Any) -> None:
    """One line where a shaping horizon is set for an environment without a shaping reward."""
    import jax

    from rl_algos.common.config import ConfigError

    _, ts = jax.eval_shape(env.reset, jax.random.PRNGKey(0))
    if "shaped_reward" not in ts.info:
        raise ConfigError("reward_shaping_horizon: this environment reports no shaping reward "
                          "(info['shaped_reward'], e.g. jaxmarl/Overcooked_*); set it to 0.")


def centralised(env: Any, algo: str) -> CentralisedCritic:
    """`env` (one multi-agent environment) with the critic's input after each agent's
    observation (`rl_core.CentralisedCritic`: MAPPO's); what it cannot take is one line naming
    `algo`."""
    from rl_algos.common.config import ConfigError

    try:
        return CentralisedCritic(env)
    except ValueError as e:
        raise ConfigError(f"{algo}: {e}") from None


def episode_metrics(info: dict[str, Any], terminated: Any, truncated: Any) -> dict[str, Any]:
    """Sums over the finished episodes of a rollout (`[T, N]` leaves): the host divides by the
    count over whatever window it reports, so windows with no finished episode stay honest. A
    multi-agent stack's actors (`AgentsAsBatch`) count their team's episode when it ends
    (`info["episode_over"]`), not when the agent itself is out. An environment whose `info`
    has `won` (bool: the step ended the episode in the learner's win) adds `episode_won_sum`,
    from which the host reports the win rate; one whose `info` has `achievements` (`[T, N, K]`:
    which of K achievements the episode has unlocked so far, Craftax) adds
    `episode_achievements_sum` `[K]`, from which the host reports each one's success rate."""
    import jax.numpy as jnp

    done = info.get("episode_over", jnp.logical_or(terminated, truncated))
    sums = {
        "episode_return_sum": jnp.sum(jnp.where(done, info["episode_return"], 0.0)),
        "episode_length_sum": jnp.sum(jnp.where(done, info["episode_length"], 0)).astype(
            jnp.float32),
        "episode_count": jnp.sum(done).astype(jnp.float32),
    }
    if "won" in info:  # a game with a winner (SMAX): episodes that ended on the learner's win
        sums["episode_won_sum"] = jnp.sum(done & info["won"]).astype(jnp.float32)
    if "achievements" in info:  # Craftax: the unlocks of the episodes that ended, per achievement
        ach = info["achievements"]
        ended = done.reshape(done.shape + (1,) * (ach.ndim - done.ndim))
        sums["episode_achievements_sum"] = jnp.sum(
            jnp.where(ended, ach, 0.0), axis=tuple(range(done.ndim))).astype(jnp.float32)
    return sums
