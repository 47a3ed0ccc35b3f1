"""The two contracts as reusable checks: `check_environment(env)`, run against every registered
environment, and `check_algorithm(spec, env)`, run against every registered algorithm on every
action-space kind it declares. Each raises an `AssertionError` subclass naming the first broken
promise."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rl_core.multiagent import agents_as_batch
from rl_core.observations import flatten_observation
from rl_core.spaces import Box, Discrete, MultiDiscrete
from rl_core.types import EPISODE_METRICS, Agent, Algorithm, Policy, TimeStep
from rl_core.wrappers import AutoReset, normalize_observation


class EnvironmentContractError(AssertionError):
    """An environment does not keep a promise of the port."""


class AlgorithmContractError(AssertionError):
    """An algorithm does not keep a promise of the `Algorithm`/`Policy` contract."""


def _require(cond: Any, msg: str) -> None:
    if not bool(cond):
        raise EnvironmentContractError(msg)


def _signature(tree: Any) -> Any:
    """The tree's structure and each leaf's shape and dtype, comparable with `==` (containers
    are not compared themselves: some define an `__eq__` over array contents)."""
    leaves, treedef = jax.tree.flatten(tree)
    return treedef, tuple((jnp.shape(x), jnp.result_type(x)) for x in leaves)


def check_environment(env: Any, num_steps: int = 64, seed: int = 0) -> None:
    """Checks, for an unbatched environment:
    * it has `reset`, `step`, `observation_space`, `action_space` of the known space types;
    * `reset`/`step` return `(state, TimeStep)`; reward float32 `[]`; flags bool `[]`;
    * observations lie in `observation_space` (shape, dtype, bounds) and are finite;
    * the TimeStep has the same structure, shapes and dtypes at reset and after a step (a scan
      carries it), and `step` keeps the state's structure (no recompilation);
    * it is pure: the same key gives the same result;
    * an `action_mask`, when present, is bool `[n]` with at least one legal action;
    * it runs under `jit` and `vmap`, and under `lax.scan` with `AutoReset` for `num_steps` steps
      (random legal actions), with terminated and truncated never both arising from nonsense
      dtypes.
    """
    for attr in ("reset", "step", "observation_space", "action_space"):
        _require(hasattr(env, attr), f"environment lacks `{attr}`")
    space = env.action_space
    _require(isinstance(space, Discrete | MultiDiscrete | Box),
             f"action_space must be Discrete, MultiDiscrete or Box, got {type(space).__name__}")

    key = jax.random.PRNGKey(seed)
    reset = jax.jit(env.reset)
    state, ts = reset(key)
    _require(isinstance(ts, TimeStep), f"reset must return (state, TimeStep), got {type(ts)}")
    _check_timestep(env, ts, "reset")
    _require(not bool(ts.terminated) and not bool(ts.truncated),
             "reset returned a finished episode")
    _require(float(ts.reward) == 0.0, f"reset reward must be 0, got {float(ts.reward)}")
    state2, ts2 = reset(key)
    _require(_tree_equal(ts, ts2) and _tree_equal(state, state2),
             "reset is not deterministic for a fixed key")

    def sample_action(k, ts):
        return space.sample(k, ts.info.get("action_mask"))

    a = sample_action(jax.random.PRNGKey(seed + 1), ts)
    _require(bool(space.contains(a)), "action_space.sample produced an action outside the space")
    check_step_and_rollout(env, state, ts, sample_action, _check_timestep, num_steps, seed,
                           vmapped_reward_shape=(3,))


def check_step_and_rollout(env: Any, state: Any, ts: TimeStep,
                           sample: Callable[[jax.Array, TimeStep], Any],
                           check_timestep: Callable[[Any, TimeStep, str], None], num_steps: int,
                           seed: int, vmapped_reward_shape: tuple[int, ...]) -> None:
    """The step checks every environment port shares (`check_environment`, the multi-agent
    port's `check_multiagent_environment`), from a reset's `state` and `ts`: one `step` of
    `sample(key, ts)`'s action(s) under `jit` passes the port's `check_timestep`, keeps the
    TimeStep's and the state's structure, shapes and dtypes (a scan carries them), and is pure;
    under `lax.scan` with `AutoReset` and random actions for `num_steps` steps the rewards and
    floating observations stay finite; and `reset` vmaps over 3 keys to rewards of
    `vmapped_reward_shape`."""
    step = jax.jit(env.step)
    a = sample(jax.random.PRNGKey(seed + 1), ts)
    k_step = jax.random.PRNGKey(seed + 2)
    nstate, nts = step(state, a, k_step)
    check_timestep(env, nts, "step")
    _require(_signature(ts) == _signature(nts),
             f"TimeStep differs between reset and step:\n{_signature(ts)}\n{_signature(nts)}")
    _require(_signature(state) == _signature(nstate),
             "step changed the state's structure, shapes or dtypes (would recompile in a loop)")
    nstate2, nts2 = step(state, a, k_step)
    _require(_tree_equal(nts, nts2) and _tree_equal(nstate, nstate2),
             "step is not deterministic for fixed state, action and key")

    auto = AutoReset(env)

    def body(carry, k):
        s, t = carry
        k_a, k_s = jax.random.split(k)
        s, t = auto.step(s, sample(k_a, t), k_s)
        return (s, t), (t.reward, t.observation)

    @jax.jit
    def run(key):
        return jax.lax.scan(body, auto.reset(key), jax.random.split(key, num_steps))

    key = jax.random.PRNGKey(seed)
    (_, last), (rew, obs) = run(key)
    _require(np.all(np.isfinite(np.asarray(rew))), "non-finite reward during a random rollout")
    for leaf in jax.tree.leaves(obs):
        if jnp.issubdtype(leaf.dtype, jnp.floating):
            _require(np.all(np.isfinite(np.asarray(leaf))), "non-finite observation in a rollout")
    check_timestep(env, last, "scan")
    _, vts = jax.jit(jax.vmap(env.reset))(jax.random.split(key, 3))
    _require(jnp.shape(vts.reward) == vmapped_reward_shape, "reset does not vmap over keys")


def _tree_equal(a: Any, b: Any) -> bool:
    la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
    if len(la) != len(lb):
        return False
    return all(np.array_equal(np.asarray(x), np.asarray(y), equal_nan=True)
               for x, y in zip(la, lb, strict=True))


def _check_timestep(env: Any, ts: TimeStep, where: str) -> None:
    _require(jnp.shape(ts.reward) == () and jnp.result_type(ts.reward) == jnp.float32,
             f"{where}: reward must be float32 [], got {jnp.result_type(ts.reward)} "
             f"{jnp.shape(ts.reward)}")
    for name in ("terminated", "truncated"):
        flag = getattr(ts, name)
        _require(jnp.shape(flag) == () and jnp.result_type(flag) == jnp.bool_,
                 f"{where}: {name} must be bool [], got {jnp.result_type(flag)} {jnp.shape(flag)}")
    _require(isinstance(ts.info, dict), f"{where}: info must be a dict")
    obs_space = env.observation_space
    if isinstance(obs_space, Box) or _is_box_tree(obs_space):
        # One Box, or a structured observation: a pytree of Boxes (one per part).
        spaces, treedef = jax.tree.flatten(obs_space, is_leaf=lambda s: isinstance(s, Box))
        parts, obs_treedef = jax.tree.flatten(ts.observation)
        _require(bool(obs_treedef == treedef),  # type: ignore[operator]
                 f"{where}: observation structure {obs_treedef} does not match "
                 f"observation_space's {treedef}")
        for space, obs in zip(spaces, parts, strict=True):
            _require(jnp.shape(obs) == space.shape,
                     f"{where}: observation shape {jnp.shape(obs)} != space {space.shape}")
            _require(jnp.result_type(obs) == jnp.dtype(space.dtype),
                     f"{where}: observation dtype {jnp.result_type(obs)} != space {space.dtype}")
            _require(bool(space.contains(obs)),
                     f"{where}: observation outside observation_space bounds")
    if "action_mask" in ts.info:
        mask = ts.info["action_mask"]
        space = env.action_space
        _require(isinstance(space, Discrete | MultiDiscrete),
                 "action_mask is only defined for Discrete and MultiDiscrete actions")
        size = space.n if isinstance(space, Discrete) else sum(space.nvec)
        _require(jnp.shape(mask) == (size,) and jnp.result_type(mask) == jnp.bool_,
                 f"{where}: action_mask must be bool [{size}], got {jnp.shape(mask)}")
        live = not (bool(ts.terminated) or bool(ts.truncated))
        if isinstance(space, Discrete):
            _require(bool(jnp.any(mask)) or not live,
                     f"{where}: action_mask has no legal action in a live state")
        else:  # MultiDiscrete: per-dimension masks concatenated, each needs a legal value
            offsets = np.cumsum([0, *space.nvec[:-1]])
            legal = [bool(jnp.any(mask[o:o + n])) for o, n in zip(offsets, space.nvec,
                                                                     strict=True)]
            _require(all(legal) or not live,
                     f"{where}: action_mask leaves a dimension with no legal value in a live "
                     f"state (legal per dimension: {legal})")


def _is_box_tree(space: Any) -> bool:
    leaves = jax.tree.leaves(space, is_leaf=lambda s: isinstance(s, Box))
    return not isinstance(space, Discrete | MultiDiscrete) and bool(leaves) and all(
        isinstance(s, Box) for s in leaves)


# --------------------------------------------------------------------------- algorithms


def _require_alg(cond: Any, msg: str) -> None:
    if not bool(cond):
        raise AlgorithmContractError(msg)


def _abstract(tree: Any) -> Any:
    """`_signature` of a tree of arrays or `ShapeDtypeStruct`s."""
    leaves, treedef = jax.tree.flatten(tree)
    return treedef, tuple((tuple(x.shape), jnp.dtype(x.dtype)) for x in leaves)


def _random_mask(key: jax.Array, space: Any, n: int) -> jax.Array:
    """bool `[n, A]` legal actions, each row (each dimension's slice for MultiDiscrete) with at
    least one legal action."""
    sizes = [space.n] if isinstance(space, Discrete) else list(space.nvec)
    parts = []
    for k, size in zip(jax.random.split(key, len(sizes)), sizes, strict=True):
        k_mask, k_one = jax.random.split(k)
        mask = jax.random.bernoulli(k_mask, 0.5, (n, size))
        one = jax.nn.one_hot(jax.random.randint(k_one, (n,), 0, size), size, dtype=jnp.bool_)
        parts.append(mask | one)
    return jnp.concatenate(parts, axis=-1)


def _legal(space: Any, actions: jax.Array, mask: jax.Array) -> bool:
    if isinstance(space, Discrete):
        return bool(jnp.all(jnp.take_along_axis(mask, actions[:, None], axis=-1)))
    offsets = np.cumsum([0, *space.nvec[:-1]])
    return bool(jnp.all(jnp.take_along_axis(mask, actions + offsets, axis=-1)))


def check_algorithm(spec: Any, env: Any, config: Any = None, hparams: Any = None,
                    num_updates: int = 3, num_obs: int = 8, seed: int = 0) -> None:
    """Checks a registered algorithm (`AlgorithmSpec`) on an unbatched `env` whose action space it
    declares (of the multi-agent port for a multi-agent algorithm, its policy then acting for
    every agent of `num_obs` environments), with `config` (default: the config class's defaults)
    and `hparams` (default: `spec.default_hparams()`):
    * `make_algorithm` gives an `Algorithm`; `init` and `update` run under `jit`;
    * `update`'s metrics hold `EPISODE_METRICS`, every metric a finite scalar;
    * the carry keeps its structure, shapes and dtypes across `num_updates` updates, and the
      jitted update is traced once for all of them (no recompilation);
    * `agent(carry)` is an `Agent` shaped like `make_policy(env, config).agent_like`;
    * the policy's actions, greedy and sampled, lie in the action space (a Box action after the
      clipping `ClipAction` applies at the environment: a Gaussian sample is unbounded; it must be
      finite), and respect a legal-action mask (the environment's, and random masks when the
      spec declares `action_masks`);
    * the training policy (`Algorithm.policy`) and the evaluation policy rebuilt from the config
      give the same actions for the same agent, observations and noise; with saved observation
      statistics, acting on raw observations equals acting on the normalised ones training saw;
    * a policy with memory (`Policy.initial_state` and `step`, both or neither, in training and
      evaluation alike) keeps its state's structure from step to step, acts with `act` as `step`
      does from fresh states, resets a state where `first` is set, and its training and
      evaluation policies act alike along a few steps that carry the state.
    """
    config = spec.config_cls() if config is None else config
    hparams = spec.default_hparams() if hparams is None else hparams
    name = getattr(spec, "name", type(spec).__name__)
    algo = spec.make_algorithm(env, config)
    _require_alg(isinstance(algo, Algorithm), f"{name}: make_algorithm must return an Algorithm")
    _require_alg(algo.agent is not None and algo.policy is not None,
                 f"{name}: its Algorithm must give `agent` and `policy`")
    key = jax.random.PRNGKey(seed)
    carry = jax.jit(algo.init)(key, hparams)
    traces = [0]

    def counted(c: Any, h: Any) -> Any:
        traces[0] += 1
        return algo.update(c, h)

    update = jax.jit(counted)
    first = _abstract(carry)
    for i in range(num_updates):
        carry, metrics = update(carry, hparams)
        _require_alg(_abstract(carry) == first,
                     f"{name}: update {i} changed the carry's structure, shapes or dtypes")
        missing = [k for k in EPISODE_METRICS if k not in metrics]
        _require_alg(not missing, f"{name}: update metrics lack {missing} (EPISODE_METRICS)")
        for k, v in metrics.items():
            _require_alg(jnp.shape(v) == (), f"{name}: metric {k} must be a scalar, got "
                                              f"{jnp.shape(v)}")
            _require_alg(np.isfinite(np.asarray(v)), f"{name}: metric {k} is not finite ({v})")
    _require_alg(traces[0] == 1, f"{name}: update was traced {traces[0]} times for "
                                 f"{num_updates} calls (the carry's types drift: it recompiles)")

    agent = algo.agent(carry)
    _require_alg(isinstance(agent, Agent), f"{name}: agent(carry) must return an Agent")
    policy = spec.make_policy(env, config)
    _require_alg(_abstract(agent) == _abstract(policy.agent_like),
                 f"{name}: the trained agent does not match make_policy's agent_like:\n"
                 f"{_abstract(agent)}\n{_abstract(policy.agent_like)}")

    space = env.action_space
    k_reset, k_mask, k_noise = jax.random.split(jax.random.PRNGKey(seed + 1), 3)
    _, ts = jax.vmap(env.reset)(jax.random.split(k_reset, num_obs))
    if getattr(env, "num_agents", None) is not None:  # the policy acts for each agent
        ts, num_obs = agents_as_batch(ts), num_obs * env.num_agents
    obs = ts.observation
    masks = [ts.info.get("action_mask")]
    if getattr(spec, "action_masks", False) and isinstance(space, Discrete | MultiDiscrete):
        masks.append(_random_mask(k_mask, space, num_obs))
    trained = Agent(agent.params)  # what the training rollout acts with: normalised observations
    seen = obs if agent.obs_norm is None else normalize_observation(
        agent.obs_norm, flatten_observation(obs, 1))
    for deterministic in (True, False):
        act_eval = jax.jit(lambda a, o, z, m, d=deterministic: policy.act(a, o, z, d, m)[0])
        act_train = jax.jit(lambda a, o, z, m, d=deterministic: algo.policy.act(a, o, z, d, m)[0])
        for i, mask in enumerate(masks):
            noise = policy.noise(jax.random.fold_in(k_noise, i), (num_obs,))
            actions = act_eval(agent, obs, noise, mask)
            how = "greedy" if deterministic else "sampled"
            inside = actions
            if isinstance(space, Box):  # a Gaussian's sample: ClipAction clips it at the env
                _require_alg(bool(jnp.all(jnp.isfinite(actions))),
                             f"{name}: {how} actions are not finite")
                inside = jnp.clip(actions, space.low, space.high)
            _require_alg(bool(jnp.all(jax.vmap(space.contains)(inside))),
                         f"{name}: {how} actions outside the action space {space}")
            if mask is not None:
                _require_alg(_legal(space, actions, mask),
                             f"{name}: {how} actions break the legal-action mask")
            # Discrete actions exactly; continuous ones to float32 rounding (two programs).
            train_actions = np.asarray(act_train(trained, seen, noise, mask))
            same = (np.allclose(actions, train_actions, rtol=1e-5, atol=1e-6)
                    if isinstance(space, Box) else np.array_equal(actions, train_actions))
            _require_alg(same, f"{name}: the evaluation policy acts differently from the "
                               f"training policy ({how})")
    _check_memory(name, algo.policy, policy, agent, trained, obs, seen, masks[0], k_noise,
                  num_obs)


def _check_memory(name: str, train_policy: Policy, policy: Policy, agent: Agent, trained: Agent,
                  obs: Any, seen: Any, mask: Any, key: jax.Array, n: int) -> None:
    """The policy-with-memory part of `check_algorithm` (nothing to check for a feed-forward
    policy)."""
    for pol, which in ((policy, "make_policy's"), (train_policy, "the training")):
        _require_alg((pol.initial_state is None) == (pol.step is None),
                     f"{name}: {which} policy must give both initial_state and step, or neither")
    _require_alg((policy.step is None) == (train_policy.step is None),
                 f"{name}: the training and evaluation policies disagree on having memory")
    if policy.step is None or policy.initial_state is None:
        return
    assert train_policy.step is not None and train_policy.initial_state is not None
    state = policy.initial_state(n)
    _require_alg(_abstract(state) == _abstract(train_policy.initial_state(n)),
                 f"{name}: the training and evaluation policies' initial states differ")
    first = jnp.zeros((n,), jnp.bool_)
    eval_fn, train_fn = policy.step, train_policy.step
    step_eval = jax.jit(lambda a, s, o, f, z, d: eval_fn(a, s, o, f, z, d, mask),
                        static_argnums=5)
    step_train = jax.jit(lambda a, s, o, f, z, d: train_fn(a, s, o, f, z, d, mask),
                         static_argnums=5)
    noise = policy.noise(jax.random.fold_in(key, 100), (n,))
    fresh = step_eval(agent, state, obs, jnp.ones((n,), jnp.bool_), noise, True)
    acted = policy.act(agent, obs, noise, True, mask)[0]
    _require_alg(_close(fresh[0], acted), f"{name}: act differs from step from fresh states")
    s_eval, s_train = state, train_policy.initial_state(n)
    for t in range(3):
        noise = policy.noise(jax.random.fold_in(key, 101 + t), (n,))
        a_eval, _, new_eval = step_eval(agent, s_eval, obs, first, noise, False)
        a_train, _, s_train = step_train(trained, s_train, seen, first, noise, False)
        _require_alg(_abstract(new_eval) == _abstract(s_eval),
                     f"{name}: step {t} changed the policy state's structure, shapes or dtypes")
        _require_alg(_close(a_eval, a_train),
                     f"{name}: the evaluation policy acts differently from the training policy "
                     f"at step {t} of carrying its state")
        s_eval = new_eval
    # A state carried for three steps, reset by `first`, acts as a fresh one.
    reset = step_eval(agent, s_eval, obs, jnp.ones((n,), jnp.bool_), noise, True)
    _require_alg(_close(reset[0], fresh[0]) and _close(reset[2], fresh[2]),
                 f"{name}: step with first=True does not reset the policy state")


def _close(a: Any, b: Any) -> bool:
    """Equal pytrees: integer leaves (discrete actions) exactly, float ones to float32 rounding
    (a jitted and an eager program)."""
    return all(np.allclose(np.asarray(x), np.asarray(y), rtol=1e-5, atol=1e-6)
               for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True))
