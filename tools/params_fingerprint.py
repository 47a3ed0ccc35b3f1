"""Fingerprints of the parameters after short training runs, one line per case: the evidence that
a refactoring left training bitwise unchanged. Run it before and after a change and compare:

    uv run python tools/params_fingerprint.py > before.txt   # (at the old commit)
    uv run python tools/params_fingerprint.py > after.txt
    diff before.txt after.txt

`uv run python tools/params_fingerprint.py ppo dqn` runs only those algorithms' cases.

Each case trains 2 seeds (vmapped) of one registered algorithm for a few updates with a fixed
config, through the registry's `make_algorithm` and rl-core's loop, and prints the SHA-256 of every
parameter leaf's bytes (member axis included) and of the episode-return metric.
"""

from __future__ import annotations

import hashlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

import rl_algos
import rl_envs
from rl_algos.common import hparams_as_arrays
from rl_core import make_train

# (algorithm, environment id, preset or None, static overrides)
CASES = [
    ("ppo", "gymnax/CartPole-v1", None, dict(total_timesteps=4 * 128 * 6)),
    ("ppo", "gymnax/Pendulum-v1", "continuous_control", dict(total_timesteps=16 * 256 * 3)),
    ("dpo", "gymnax/CartPole-v1", None, dict(total_timesteps=4 * 128 * 6)),
    ("vpg", "gymnax/CartPole-v1", None, dict(total_timesteps=8 * 64 * 6)),
    ("pqn", "gymnax/CartPole-v1", "classic_control", dict(total_timesteps=32 * 64 * 4)),
    ("td3", "gymnax/Pendulum-v1", "classic_control",
     dict(total_timesteps=4 * 2 * 800, learning_starts=4000)),
    ("qlearning", "native/GridWorld", None, None),
    ("lpo", "gymnax/CartPole-v1", None, dict(total_timesteps=4 * 128 * 3)),
    ("ppo_rnn", "gymnax/CartPole-v1", "classic_control", dict(total_timesteps=8 * 32 * 3)),
    ("pqn_rnn", "gymnax/CartPole-v1", "classic_control", dict(total_timesteps=32 * 64 * 2)),
    ("dqn", "gymnax/CartPole-v1", "classic_control",
     dict(total_timesteps=10 * 300, learning_starts=1000)),
    ("sac", "gymnax/Pendulum-v1", "classic_control",
     dict(total_timesteps=600, learning_starts=300)),
    ("a2c", "gymnax/CartPole-v1", "classic_control", dict(total_timesteps=8 * 5 * 20)),
    ("alphazero", "pgx/tic_tac_toe", "board_game",
     dict(total_timesteps=16 * 12 * 3, num_envs=16, num_steps=12, num_simulations=8)),
]


def digest(tree) -> str:
    h = hashlib.sha256()
    for leaf in jax.tree.leaves(tree):
        h.update(np.ascontiguousarray(np.asarray(leaf)).tobytes())
    return h.hexdigest()[:16]


def main() -> None:
    only = set(sys.argv[1:])  # algorithm names to run (default: every case)
    for algo, env_id, preset, static in CASES:
        if only and algo not in only:
            continue
        spec = rl_algos.get(algo)
        s_kw, h_kw, _ = spec.presets[preset] if preset else ({}, {}, {})
        config = spec.config_cls(**{**s_kw, **(static or {})})
        hparams = spec.default_hparams()._replace(**h_kw)
        env = rl_envs.make(env_id)
        train = make_train(spec.make_algorithm(env, config))
        keys = jnp.stack([jax.random.PRNGKey(s) for s in (0, 1)])
        hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (2, *x.shape)), hparams_as_arrays(hparams))
        result = jax.jit(jax.vmap(train))(keys, hp)
        params = result.state.train_state.params
        print(f"{algo:10s} {env_id:22s} {preset or '-':18s} params {digest(params)} "
              f"returns {digest(result.metrics['episode_return_sum'])}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
