"""Run with several (simulated) devices: PPO, 10 members, once sharded over every device (padded
to a multiple of the device count) and once on one device. Writes both results to an .npz for the
calling test to compare. Usage: python sharded_vs_unsharded.py OUT.npz"""

from __future__ import annotations

import sys

import jax
import jax.numpy as jnp
import numpy as np

import rl_envs
from rl_algos.common import hparams_as_arrays
from rl_algos.ppo import PPOConfig, PPOHParams, make_algorithm
from rl_core import compile_members, member_mesh, run_members

M = 10
CONFIG = PPOConfig(total_timesteps=4 * 16 * 4, num_envs=4, num_steps=16, num_minibatches=2,
                   num_epochs=2)


def main(out: str) -> None:
    algo = make_algorithm(rl_envs.make("gymnax/CartPole-v1"), CONFIG)
    keys = jax.random.split(jax.random.PRNGKey(11), M)
    # Different learning rates per member, so a member mix-up in the padding would show.
    hp = hparams_as_arrays(PPOHParams())
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (M,)), hp)._replace(
        lr=jnp.linspace(1e-4, 1e-3, M, dtype=jnp.float32))
    mesh = member_mesh()
    sharded_c = compile_members(algo, keys, hp, chunk_len=2, mesh=mesh)
    sharded = run_members(sharded_c, keys, hp)
    plain = run_members(compile_members(algo, keys, hp, chunk_len=2), keys, hp)
    arrays = {"num_devices": np.array(len(jax.devices())),
              "num_padded": np.array(sharded_c.num_padded)}
    for tag, res in (("sharded", sharded), ("plain", plain)):
        for i, leaf in enumerate(jax.tree.leaves(res.state.train_state.params)):
            arrays[f"{tag}/param{i}"] = np.asarray(leaf)
        for k, v in res.metrics.items():
            arrays[f"{tag}/metric/{k}"] = np.asarray(v)
    np.savez(out, **arrays)


if __name__ == "__main__":
    main(sys.argv[1])
