"""brax ids train with PPO's 'brax' preset by default; other continuous tasks keep theirs."""

from __future__ import annotations

import rl_envs
from rl_algos import registry
from rl_algos.ppo import PPOConfig, PPOHParams


def _default(algo: str, env_id: str) -> str | None:
    env = rl_envs.make(env_id)
    return registry.get(algo).default_preset(rl_envs.family(env_id), env.action_space)


def test_brax_ids_default_to_the_brax_preset() -> None:
    assert _default("ppo", "brax/inverted_pendulum") == "brax"
    # Algorithms without a brax preset fall back to their continuous-control one.
    assert _default("vpg", "brax/inverted_pendulum") == registry.get("vpg").default_preset(
        "classic_control", rl_envs.make("gymnax/Pendulum-v1").action_space)


def test_other_families_are_unchanged() -> None:
    assert _default("ppo", "gymnax/Pendulum-v1") == "continuous_control"
    assert _default("ppo", "gymnax/CartPole-v1") == "classic_control"


def test_the_brax_preset_is_a_valid_configuration() -> None:
    static, hparams, _ = registry.get("ppo").presets["brax"]
    PPOConfig(**static).validate()
    PPOHParams(**hparams).validate()
    assert static["normalize_observations"] and static["normalize_rewards"]
