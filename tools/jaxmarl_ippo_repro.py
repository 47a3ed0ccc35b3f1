"""IPPO restated from JaxMARL, as one file, to compare against: the whole training run (rollout of
every agent, GAE, minibatch epochs) is one pure function of a PRNG key, run as
`jax.jit(jax.vmap(make_train(config)))(keys)`.

It restates JaxMARL's feed-forward IPPO baseline `baselines/IPPO/ippo_ff_mpe.py` with its config
`baselines/IPPO/config/ippo_ff_mpe.yaml` (`CONFIG` below: MPE_simple_spread_v3, 16 envs x 128
steps, 4 epochs x 4 minibatches, lr 2.5e-4 annealed, tanh MLPs of 64-64, gamma 0.99, lambda 0.95,
clip 0.2, entropy 0.01, value 0.5, grad-norm 0.5, 1e7 environment steps) from
github.com/FLAIROx/JaxMARL (commit c793d09): Rutherford et al., "JaxMARL: Multi-Agent RL
Environments and Algorithms in JAX", NeurIPS 2024 Datasets and Benchmarks, arXiv:2311.10090.
The environment is the installed `jaxmarl` package (0.2.0) under its own
`jaxmarl.wrappers.baselines.MPELogWrapper`, as theirs.
The actor-critic (two separate tanh MLPs, orthogonal initialisers, a distrax Categorical), the
optimiser (clip_by_global_norm then Adam with eps 1e-5 on their linear schedule), `batchify` /
`unbatchify` in their agent-major order (an agent's actions go to the environment as `[E, 1]`),
the info reshaped environment-major as theirs, the GAE scan (`unroll=8`), the permutation into
minibatches, the loss and the order of the PRNG splits follow theirs line for line (jax >= 0.5
defaults to jax_threefry_partitionable=True, older jax to False, so the same key gives other
numbers across that change).

With `--task overcooked` it is `baselines/IPPO/ippo_ff_overcooked.py` with its
`ippo_ff_overcooked.yaml` (`OVERCOOKED_CONFIG`: the same network, losses and sizes, 5e6 steps),
which differs from the MPE script in five places, each followed here: JaxMARL's plain
`LogWrapper(replace_info=False)` (each agent's own return), observations flattened
(`[H, W, 26]` -> `[H*W*26]`), actions handed over as `[E]` per agent (not `[E, 1]`), the GAE
scan's `unroll=16`, and the reward shaping: each agent's
reward plus its `info["shaped_reward"]` times a weight falling linearly from 1 to 0 over
REW_SHAPING_HORIZON (2.5e6) environment steps, the weight held for a whole update (it reads the
update count, which the runner state carries). Their yaml's layout is coord_ring; `--layout`
picks another.

What differs from theirs:
- No wandb, hydra, plotting, and no `jax.experimental.io_callback` that hands every update's
  metrics to wandb: `train` returns the same metric dict (per update: the means of the info dict
  over the rollout, the means of the loss terms, `ratio0`), stacked over updates by the same
  `lax.scan`. `make_train` works on a copy of the config instead of writing NUM_ACTORS,
  NUM_UPDATES and MINIBATCH_SIZE into the caller's dict.
- `batchify` leaves out theirs' padding branch, for agents whose observations are shorter than the
  longest: it is never taken on MPE_simple_spread_v3 (all agents see 18 numbers) and would fail if
  it were (`pad` is called without its length, and adds a tuple to a list); here it is an error at
  trace time instead.
- Overcooked's `info["shaped_reward"]` is taken out of the info before it becomes the metrics
  (theirs logs its first agent's mean); the other keys are reshaped environment-major as in the
  MPE script.
- Additions: per-update metrics `episode_return_sum` and `episode_count` (sums over the rollout and
  the actors of `returned_episode_returns` where `returned_episode`, and of `returned_episode`;
  on Overcooked the returns times the number of agents, making each the team return)
  next to their means, and `final_return(out)`; a key SEQ_ORTHOGONAL (False in `CONFIG`): True
  wraps every orthogonal initialiser in `jax.custom_batching.sequential_vmap`, the same weights
  drawn one seed at a time, which avoids the batched-QR deadlock of jax 0.10.2 on CPU under `vmap`
  over seeds (docs/stress-many-seeds.md) and is what ours does.

Returns are "as JaxMARL reports them": `MPELogWrapper` multiplies each agent's reward by the
number of agents before summing it into `returned_episode_returns`, so the mean of that over the
agents of an episode is the team return (the sum of the agents' returns), and the mean over every
actor that finished an episode is the mean team return. `final_return` is that mean over the
episodes that ended in the last 5% of updates (the window of `rl_core.final_return`), per seed,
averaged over seeds. Their own plot is the per-update mean of `returned_episode_returns` over all
steps, which also counts the last finished episode's value at every step of the next (and 0 before
the first ends); `plotted_return(out)` gives that, over the same window.

    uv run --group bench python tools/jaxmarl_ippo_repro.py [--task mpe|overcooked]
        [--layout cramped_room] [--seeds 1] [--timesteps T] [--seed 30] [--seq-orthogonal]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import distrax
import flax.linen as nn
import jax
import jax.numpy as jnp
import jaxmarl
import numpy as np
import optax
from flax.linen.initializers import constant, orthogonal
from flax.training.train_state import TrainState
from jaxmarl.environments.overcooked import overcooked_layouts
from jaxmarl.wrappers.baselines import LogWrapper, MPELogWrapper

# baselines/IPPO/config/ippo_ff_mpe.yaml (wandb keys left out).
CONFIG: dict[str, Any] = {
    "LR": 2.5e-4,
    "NUM_ENVS": 16,
    "NUM_STEPS": 128,
    "TOTAL_TIMESTEPS": 10_000_000,  # 1e7
    "UPDATE_EPOCHS": 4,
    "NUM_MINIBATCHES": 4,
    "GAMMA": 0.99,
    "GAE_LAMBDA": 0.95,
    "CLIP_EPS": 0.2,
    "ENT_COEF": 0.01,
    "VF_COEF": 0.5,
    "MAX_GRAD_NORM": 0.5,
    "ACTIVATION": "tanh",
    "ENV_NAME": "MPE_simple_spread_v3",
    "ENV_KWARGS": {},
    "ANNEAL_LR": True,
    "SEED": 30,
    "NUM_SEEDS": 10,
    "SEQ_ORTHOGONAL": False,  # not theirs (see the module docstring)
}

# baselines/IPPO/config/ippo_ff_overcooked.yaml: ippo_ff_mpe.yaml's settings but for these (wandb
# keys left out; its layout is coord_ring).
OVERCOOKED_CONFIG: dict[str, Any] = {
    **CONFIG,
    "TOTAL_TIMESTEPS": 5_000_000,  # 5e6
    "REW_SHAPING_HORIZON": 2_500_000,  # 2.5e6
    "ENV_NAME": "overcooked",
    "ENV_KWARGS": {"layout": "coord_ring"},
    "NUM_SEEDS": 1,
}

TASKS = {"mpe": CONFIG, "overcooked": OVERCOOKED_CONFIG}

# The fraction of updates whose finished episodes make the final return (rl_core's window).
FINAL_WINDOW = 0.05

Initializer = Callable[..., jax.Array]


def ortho(scale: float, sequential: bool) -> Initializer:
    """flax's `orthogonal(scale)`; if `sequential`, its QR run one member at a time under vmap."""
    init = orthogonal(scale)
    if not sequential:
        return init

    def seq_init(key: jax.Array, shape: tuple[int, ...], dtype: Any = jnp.float32) -> jax.Array:
        return jax.custom_batching.sequential_vmap(lambda k: init(k, shape, dtype))(key)

    return seq_init


class ActorCritic(nn.Module):
    """ippo_ff_mpe.py's ActorCritic: actor and critic, each Dense(64) -> act -> Dense(64) -> act
    -> head; heads orthogonal(0.01) (logits) and orthogonal(1.0) (value), others sqrt(2)."""

    action_dim: int
    activation: str = "tanh"
    seq_orthogonal: bool = False

    @nn.compact
    def __call__(self, x: jax.Array) -> tuple[distrax.Categorical, jax.Array]:
        activation = nn.relu if self.activation == "relu" else nn.tanh
        seq = self.seq_orthogonal
        actor_mean = nn.Dense(64, kernel_init=ortho(np.sqrt(2), seq),
                              bias_init=constant(0.0))(x)
        actor_mean = activation(actor_mean)
        actor_mean = nn.Dense(64, kernel_init=ortho(np.sqrt(2), seq),
                              bias_init=constant(0.0))(actor_mean)
        actor_mean = activation(actor_mean)
        actor_mean = nn.Dense(self.action_dim, kernel_init=ortho(0.01, seq),
                              bias_init=constant(0.0))(actor_mean)
        pi = distrax.Categorical(logits=actor_mean)

        critic = nn.Dense(64, kernel_init=ortho(np.sqrt(2), seq), bias_init=constant(0.0))(x)
        critic = activation(critic)
        critic = nn.Dense(64, kernel_init=ortho(np.sqrt(2), seq),
                          bias_init=constant(0.0))(critic)
        critic = activation(critic)
        critic = nn.Dense(1, kernel_init=ortho(1.0, seq), bias_init=constant(0.0))(critic)

        return pi, jnp.squeeze(critic, axis=-1)


class Transition(NamedTuple):
    done: jax.Array
    action: jax.Array
    value: jax.Array
    reward: jax.Array
    log_prob: jax.Array
    obs: jax.Array
    info: dict[str, jax.Array]


def batchify(x: dict[str, jax.Array], agent_list: list[str], num_actors: int) -> jax.Array:
    """Agents stacked first: `[A, E, ...]` -> `[A * E, -1]` (actor `i` is agent `i // E`)."""
    sizes = {x[a].shape[-1] for a in agent_list}
    if len(sizes) != 1:  # theirs pads here (a branch that cannot run; see the docstring)
        raise NotImplementedError("agents with observations of different sizes")
    return jnp.stack([x[a] for a in agent_list]).reshape((num_actors, -1))


def unbatchify(x: jax.Array, agent_list: list[str], num_envs: int,
               num_actors: int) -> dict[str, jax.Array]:
    x = x.reshape((num_actors, num_envs, -1))
    return {a: x[i] for i, a in enumerate(agent_list)}


def make_train(config: dict[str, Any]) -> Callable[[jax.Array], dict[str, Any]]:
    """The whole IPPO run as a pure function of a PRNG key: returns {"runner_state", "metrics"},
    metrics stacked over the NUM_UPDATES updates."""
    config = dict(config)
    kwargs = dict(config["ENV_KWARGS"])
    if isinstance(kwargs.get("layout"), str):  # as their main: the layout's name -> its dict
        kwargs["layout"] = overcooked_layouts[kwargs["layout"]]
    env = jaxmarl.make(config["ENV_NAME"], **kwargs)
    config["NUM_ACTORS"] = env.num_agents * config["NUM_ENVS"]
    config["NUM_UPDATES"] = config["TOTAL_TIMESTEPS"] // config["NUM_STEPS"] // config["NUM_ENVS"]
    config["MINIBATCH_SIZE"] = (
        config["NUM_ACTORS"] * config["NUM_STEPS"] // config["NUM_MINIBATCHES"])

    overcooked = "REW_SHAPING_HORIZON" in config  # ippo_ff_overcooked.py's variant
    if overcooked:  # LogWrapper: each agent's own return
        env, team_scale = LogWrapper(env, replace_info=False), env.num_agents
    else:  # ippo_ff_mpe.py: MPELogWrapper, each agent's reward times the number of agents
        env, team_scale = MPELogWrapper(env), 1
    rew_shaping_anneal = optax.linear_schedule(
        init_value=1.0, end_value=0.0, transition_steps=config.get("REW_SHAPING_HORIZON", 1))

    def linear_schedule(count: jax.Array) -> jax.Array:
        frac = (1.0 - (count // (config["NUM_MINIBATCHES"] * config["UPDATE_EPOCHS"]))
                / config["NUM_UPDATES"])
        return config["LR"] * frac

    def train(rng: jax.Array) -> dict[str, Any]:
        # INIT NETWORK
        network = ActorCritic(env.action_space(env.agents[0]).n,
                              activation=config["ACTIVATION"],
                              seq_orthogonal=config.get("SEQ_ORTHOGONAL", False))
        rng, _rng = jax.random.split(rng)
        init_x = jnp.zeros(env.observation_space(env.agents[0]).shape).flatten()
        network_params = network.init(_rng, init_x)
        if config["ANNEAL_LR"]:
            tx = optax.chain(optax.clip_by_global_norm(config["MAX_GRAD_NORM"]),
                             optax.adam(learning_rate=linear_schedule, eps=1e-5))
        else:
            tx = optax.chain(optax.clip_by_global_norm(config["MAX_GRAD_NORM"]),
                             optax.adam(config["LR"], eps=1e-5))
        train_state = TrainState.create(apply_fn=network.apply, params=network_params, tx=tx)

        # INIT ENV
        rng, _rng = jax.random.split(rng)
        reset_rng = jax.random.split(_rng, config["NUM_ENVS"])
        obsv, env_state = jax.vmap(env.reset)(reset_rng)

        # TRAIN LOOP
        def _update_step(runner_state: tuple, unused: None) -> tuple[tuple, dict[str, Any]]:
            # COLLECT TRAJECTORIES
            def _env_step(runner_state: tuple, unused: None) -> tuple[tuple, Transition]:
                train_state, env_state, last_obs, update_step, rng = runner_state

                obs_batch = batchify(last_obs, env.agents, config["NUM_ACTORS"])
                # SELECT ACTION
                rng, _rng = jax.random.split(rng)
                pi, value = network.apply(train_state.params, obs_batch)
                action = pi.sample(seed=_rng)
                log_prob = pi.log_prob(action)
                env_act = unbatchify(action, env.agents, config["NUM_ENVS"], env.num_agents)
                if overcooked:  # theirs: `[E]` per agent (the MPE script hands `[E, 1]`)
                    env_act = {k: v.flatten() for k, v in env_act.items()}

                # STEP ENV
                rng, _rng = jax.random.split(rng)
                rng_step = jax.random.split(_rng, config["NUM_ENVS"])
                obsv, env_state, reward, done, info = jax.vmap(env.step)(
                    rng_step, env_state, env_act)

                if overcooked:  # theirs: the shaping's weight held for the whole update
                    current_timestep = update_step * config["NUM_STEPS"] * config["NUM_ENVS"]
                    shaped = info.pop("shaped_reward")
                    reward = jax.tree.map(
                        lambda x, y: x + y * rew_shaping_anneal(current_timestep),
                        reward, shaped)
                # [E, A] -> [E * A]: environment-major, unlike the rest (as ippo_ff_mpe.py)
                info = jax.tree.map(lambda x: x.reshape(config["NUM_ACTORS"]), info)
                transition = Transition(
                    batchify(done, env.agents, config["NUM_ACTORS"]).squeeze(),
                    action,
                    value,
                    batchify(reward, env.agents, config["NUM_ACTORS"]).squeeze(),
                    log_prob,
                    obs_batch,
                    info,
                )
                runner_state = (train_state, env_state, obsv, update_step, rng)
                return runner_state, transition

            runner_state, traj_batch = jax.lax.scan(
                _env_step, runner_state, None, config["NUM_STEPS"])

            # CALCULATE ADVANTAGE
            train_state, env_state, last_obs, update_step, rng = runner_state
            last_obs_batch = batchify(last_obs, env.agents, config["NUM_ACTORS"])
            _, last_val = network.apply(train_state.params, last_obs_batch)

            def _calculate_gae(traj_batch: Transition,
                               last_val: jax.Array) -> tuple[jax.Array, jax.Array]:
                def _get_advantages(gae_and_next_value: tuple[jax.Array, jax.Array],
                                    transition: Transition) -> tuple[tuple, jax.Array]:
                    gae, next_value = gae_and_next_value
                    done, value, reward = transition.done, transition.value, transition.reward
                    delta = reward + config["GAMMA"] * next_value * (1 - done) - value
                    gae = delta + config["GAMMA"] * config["GAE_LAMBDA"] * (1 - done) * gae
                    return (gae, value), gae

                _, advantages = jax.lax.scan(
                    _get_advantages, (jnp.zeros_like(last_val), last_val), traj_batch,
                    reverse=True, unroll=16 if overcooked else 8)
                return advantages, advantages + traj_batch.value

            advantages, targets = _calculate_gae(traj_batch, last_val)

            # UPDATE NETWORK
            def _update_epoch(update_state: tuple, unused: None) -> tuple[tuple, dict]:
                def _update_minbatch(train_state: TrainState,
                                     batch_info: tuple) -> tuple[TrainState, dict]:
                    traj_batch, advantages, targets = batch_info

                    def _loss_fn(params: Any, traj_batch: Transition, gae: jax.Array,
                                 targets: jax.Array) -> tuple[jax.Array, tuple]:
                        # RERUN NETWORK
                        pi, value = network.apply(params, traj_batch.obs)
                        log_prob = pi.log_prob(traj_batch.action)

                        # CALCULATE VALUE LOSS
                        value_pred_clipped = traj_batch.value + (
                            value - traj_batch.value).clip(-config["CLIP_EPS"],
                                                           config["CLIP_EPS"])
                        value_losses = jnp.square(value - targets)
                        value_losses_clipped = jnp.square(value_pred_clipped - targets)
                        value_loss = 0.5 * jnp.maximum(value_losses, value_losses_clipped).mean()

                        # CALCULATE ACTOR LOSS
                        ratio = jnp.exp(log_prob - traj_batch.log_prob)
                        gae = (gae - gae.mean()) / (gae.std() + 1e-8)
                        loss_actor1 = ratio * gae
                        loss_actor2 = jnp.clip(ratio, 1.0 - config["CLIP_EPS"],
                                               1.0 + config["CLIP_EPS"]) * gae
                        loss_actor = -jnp.minimum(loss_actor1, loss_actor2)
                        loss_actor = loss_actor.mean()
                        entropy = pi.entropy().mean()

                        total_loss = (loss_actor + config["VF_COEF"] * value_loss
                                      - config["ENT_COEF"] * entropy)
                        return total_loss, (value_loss, loss_actor, entropy, ratio)

                    grad_fn = jax.value_and_grad(_loss_fn, has_aux=True)
                    total_loss, grads = grad_fn(train_state.params, traj_batch, advantages,
                                                targets)
                    train_state = train_state.apply_gradients(grads=grads)

                    loss_info = {
                        "total_loss": total_loss[0],
                        "actor_loss": total_loss[1][1],
                        "critic_loss": total_loss[1][0],
                        "entropy": total_loss[1][2],
                        "ratio": total_loss[1][3],
                    }
                    return train_state, loss_info

                train_state, traj_batch, advantages, targets, rng = update_state
                rng, _rng = jax.random.split(rng)
                batch_size = config["MINIBATCH_SIZE"] * config["NUM_MINIBATCHES"]
                assert batch_size == config["NUM_STEPS"] * config["NUM_ACTORS"], (
                    "batch size must be equal to number of steps * number of actors")
                permutation = jax.random.permutation(_rng, batch_size)
                batch = (traj_batch, advantages, targets)
                batch = jax.tree.map(lambda x: x.reshape((batch_size,) + x.shape[2:]), batch)
                shuffled_batch = jax.tree.map(lambda x: jnp.take(x, permutation, axis=0), batch)
                minibatches = jax.tree.map(
                    lambda x: jnp.reshape(x, [config["NUM_MINIBATCHES"], -1] + list(x.shape[1:])),
                    shuffled_batch)
                train_state, loss_info = jax.lax.scan(_update_minbatch, train_state, minibatches)
                update_state = (train_state, traj_batch, advantages, targets, rng)
                return update_state, loss_info

            update_state = (train_state, traj_batch, advantages, targets, rng)
            update_state, loss_info = jax.lax.scan(
                _update_epoch, update_state, None, config["UPDATE_EPOCHS"])
            train_state = update_state[0]
            metric = traj_batch.info
            rng = update_state[-1]

            r0 = {"ratio0": loss_info["ratio"][0, 0].mean()}
            loss_info = jax.tree.map(lambda x: x.mean(), loss_info)
            # Not theirs: what final_return needs (sums over steps and actors).
            finished = {
                "episode_return_sum": team_scale * jnp.sum(metric["returned_episode_returns"]
                                                           * metric["returned_episode"]),
                "episode_count": jnp.sum(metric["returned_episode"]),
            }
            metric = jax.tree.map(lambda x: x.mean(), metric)
            metric = {**metric, **loss_info, **r0, **finished}
            # (theirs: jax.experimental.io_callback(callback, None, metric), to wandb)
            runner_state = (train_state, env_state, last_obs, update_step + 1, rng)
            return runner_state, metric

        rng, _rng = jax.random.split(rng)
        runner_state = (train_state, env_state, obsv, 0, _rng)
        runner_state, metric = jax.lax.scan(
            _update_step, runner_state, None, config["NUM_UPDATES"])
        return {"runner_state": runner_state, "metrics": metric}

    return train


def with_timesteps(config: dict[str, Any], timesteps: int) -> dict[str, Any]:
    """A copy of `config` running `timesteps` environment steps per seed (the learning-rate
    schedule, which counts updates, spreads over them)."""
    return {**config, "TOTAL_TIMESTEPS": timesteps}


def window_sum(x: np.ndarray) -> np.ndarray:
    """The last `FINAL_WINDOW` of updates (at least one) of `[seeds, updates]`, summed."""
    w = max(1, int(round(x.shape[-1] * FINAL_WINDOW)))
    return x[..., -w:].sum(-1)


def final_return(out: dict[str, Any]) -> float:
    """Mean team return (the `episode_return_sum` metric: on MPE JaxMARL's
    `returned_episode_returns`, each agent's return times the number of agents; on Overcooked
    each agent's return times the number of agents here) of the training episodes that ended in
    the last 5% of updates, per seed (NaN where none ended), averaged over seeds. `out` is the
    vmapped output of `make_train` (`[seeds, updates]` metrics; an unvmapped output counts as
    one seed)."""
    m = out["metrics"]
    count = np.asarray(m["episode_count"], np.float64)
    ret_sum = np.asarray(m["episode_return_sum"], np.float64).reshape(-1, count.shape[-1])
    s, c = window_sum(ret_sum), window_sum(count.reshape(ret_sum.shape))
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(np.nanmean(np.where(c > 0, s / np.maximum(c, 1), np.nan)))


def plotted_return(out: dict[str, Any]) -> float:
    """What their plot shows, over the same window: the per-update mean over steps and actors of
    `returned_episode_returns` (stale between episodes), averaged over updates and seeds. On MPE
    that is a team return; on Overcooked one agent's return, half the team's."""
    x = np.asarray(out["metrics"]["returned_episode_returns"], np.float64)
    x = x.reshape(-1, x.shape[-1])
    return float(np.mean(window_sum(x) / max(1, int(round(x.shape[-1] * FINAL_WINDOW)))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", choices=sorted(TASKS), default="mpe")
    ap.add_argument("--layout", default=None, help="Overcooked's layout (theirs: coord_ring)")
    ap.add_argument("--seeds", type=int, default=1, help="their NUM_SEEDS (MPE 10, Overcooked 1)")
    ap.add_argument("--timesteps", type=int, default=None, help="TOTAL_TIMESTEPS (1e7, 5e6)")
    ap.add_argument("--seed", type=int, default=None, help="default: SEED (30)")
    ap.add_argument("--seq-orthogonal", action="store_true")
    a = ap.parse_args()
    if a.layout is not None and a.task != "overcooked":
        ap.error("--layout is Overcooked's: add --task overcooked")
    config = dict(TASKS[a.task], SEQ_ORTHOGONAL=a.seq_orthogonal)
    if a.layout is not None:
        config["ENV_KWARGS"] = {**config["ENV_KWARGS"], "layout": a.layout}
    if a.timesteps is not None:
        config = with_timesteps(config, a.timesteps)
    rngs = jax.random.split(jax.random.PRNGKey(config["SEED"] if a.seed is None else a.seed),
                            a.seeds)
    t0 = time.perf_counter()
    fn = jax.jit(jax.vmap(make_train(config))).lower(rngs).compile()
    compile_s = time.perf_counter() - t0
    print(f"jax {jax.__version__}: compiled in {compile_s:.1f}s; running", flush=True)
    t0 = time.perf_counter()
    out = jax.block_until_ready(fn(rngs))
    run_s = time.perf_counter() - t0
    per_update = config["NUM_ENVS"] * config["NUM_STEPS"]
    steps = a.seeds * (config["TOTAL_TIMESTEPS"] // per_update) * per_update
    print(f"ok: compile {compile_s:.1f}s run {run_s:.1f}s {steps / run_s:,.0f} env steps/s "
          f"team return {final_return(out):.2f} (their plot's value {plotted_return(out):.2f}"
          f"{', per agent' if a.task == 'overcooked' else ''})",
          flush=True)


if __name__ == "__main__":
    main()
