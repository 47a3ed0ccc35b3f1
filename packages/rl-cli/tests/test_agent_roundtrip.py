"""An agent trained with observation normalisation (PPO on Pendulum's preset) is saved with its
statistics, loaded by the evaluation path, and acts exactly as the end-of-training policy did."""

from __future__ import annotations

import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import rl_envs
from rl_algos.common import hparams_as_arrays
from rl_cli.after import final_agents, save_agents
from rl_cli.evaluate import load_agent
from rl_cli.overrides import as_jsonable
from rl_cli.request import RunRequest, prepare
from rl_core import Agent, compile_members, flatten_observation, normalize_observation, run_members


def test_normalised_agent_saved_loaded_acts_identically(tmp_path: Path) -> None:
    req = RunRequest("ppo", "gymnax/Pendulum-v1", num_seeds=2, total_timesteps=16 * 256 * 2)
    prep = prepare(req)
    assert prep.preset == "continuous_control" and prep.config.normalize_observations
    algo = prep.algorithm
    keys = jnp.stack([jax.random.PRNGKey(s) for s in (0, 1)])
    hp = jax.tree.map(lambda x: jnp.broadcast_to(x, (2, *x.shape)),
                      hparams_as_arrays(prep.hparams))
    result = run_members(compile_members(algo, keys, hp), keys, hp)
    trained = jax.vmap(algo.agent)(result.state)  # the end-of-training agents
    assert trained.obs_norm is not None and np.all(np.asarray(trained.obs_norm.count) > 1e3)

    save_agents(tmp_path / "params.eqx", final_agents(algo, result.state))
    (tmp_path / "config.json").write_text(json.dumps(
        {"algo": "ppo", "env": req.env, "env_kwargs": {}, "seeds": [0, 1],
         "config": as_jsonable(prep.config)}))
    loaded = load_agent(tmp_path).agents
    for a, b in zip(jax.tree.leaves(trained), jax.tree.leaves(loaded), strict=True):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))

    # Raw observations, as an evaluation environment gives them.
    env = rl_envs.make(req.env)
    _, ts = jax.vmap(env.reset)(jax.random.split(jax.random.PRNGKey(7), 16))
    obs = ts.observation
    policy = prep.spec.make_policy(env, prep.config)
    noise = policy.noise(jax.random.PRNGKey(8), (16,))
    for m in range(2):
        member = jax.tree.map(lambda x, m=m: x[m], loaded)
        end = jax.tree.map(lambda x, m=m: x[m], trained)
        for deterministic in (True, False):
            act = jax.jit(lambda a, o, z, d=deterministic: policy.act(a, o, z, d)[0])
            got = np.asarray(act(member, obs, noise))
            np.testing.assert_array_equal(got, np.asarray(act(end, obs, noise)))
            # What the training rollout did: the wrappers normalised, the policy saw no stats.
            seen = normalize_observation(end.obs_norm, flatten_observation(obs, 1))
            in_training = algo.policy.act(Agent(end.params), seen, noise, deterministic)[0]
            np.testing.assert_allclose(got, np.asarray(in_training), rtol=1e-5, atol=1e-6)
        # The statistics matter: without them the same parameters act otherwise.
        bare = np.asarray(policy.act(Agent(member.params), obs, noise, True)[0])
        assert not np.allclose(bare, np.asarray(policy.act(member, obs, noise, True)[0]))
