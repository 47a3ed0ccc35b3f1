"""Learning gates: every algorithm trained on its headline task at its documented budget, through
the same code path as the documented `rl run` command (`rl_cli.runner.execute`, the command's
preset, seeds 0..N-1 vmapped in one compiled program), against the threshold its documentation
claims (docs/algorithms.md, docs/adapters-pgx.md).

A gate fails when the code no longer delivers what the docs say: never lower a threshold or pick
seeds to make one pass; fix the code, or correct the documentation and the gate together with the
measurement that justifies it. Thresholds are either met by every seed or by the lower end of the
mean's 95% confidence interval (Student t over seeds), as the documentation states the claim.

Marked `gate`: skipped by the default `uv run pytest`; `.ci/run` runs them with
`uv run pytest -m gate -n 2 --dist load`. Set RL_GATES_LOG=path to append each gate's measured
returns as a JSON line.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rl_cli.request import RunRequest
from rl_cli.runner import execute
from rl_cli.stats import mean_ci95

pytestmark = pytest.mark.gate

EVERY_SEED = "every seed"
MEAN_LOWER_95 = "lower end of the mean's 95% CI"


@dataclass(frozen=True)
class Gate:
    name: str
    algo: str
    env: str
    num_seeds: int
    steps: int  # the documented budget, per seed, as the run reports it (preset's total)
    threshold: float
    rule: str
    claim: str  # where the documentation states it
    total_timesteps: int | None = None  # None: the preset's own budget
    sets: dict[str, str] = field(default_factory=dict)
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    # > 0: the claim is on the final greedy evaluation (this many episodes per seed, the
    # summary's `greedy_eval_return_per_member`), not on the behaviour policy's training return.
    greedy_episodes: int = 0


GATES = [
    # The README's first command (docs/results.md: greedy 500 on every seed). "Solved": 475.
    Gate("ppo-cartpole", "ppo", "gymnax/CartPole-v1", 8, 499_712, 475.0, EVERY_SEED,
         "README quickstart; packages/rl-algos/tests/test_ppo_learning.py: solves every seed"),
    Gate("dpo-cartpole", "dpo", "gymnax/CartPole-v1", 8, 499_712, 475.0, EVERY_SEED,
         "docs/algorithms.md DPO: PPO's loop and presets, solves CartPole as PPO does"),
    Gate("vpg-cartpole", "vpg", "gymnax/CartPole-v1", 8, 999_936, 475.0, EVERY_SEED,
         "docs/algorithms.md VPG: 500.00 on every one of the 8 seeds"),
    # PQN explores with ε 0.2 to the end (the reference's setting) and, as the reference does, is
    # judged by its greedy policy: 10 evaluation episodes per seed after training.
    Gate("pqn-cartpole", "pqn", "gymnax/CartPole-v1", 8, 499_712, 475.0, EVERY_SEED,
         "docs/algorithms.md PQN: the greedy evaluation of every seed >= 475 within 5e5 steps",
         greedy_episodes=10),
    # The mean, not every seed: the seeds' final returns depend on the CPU that compiles the
    # program (one seed ends at -205 on one x86 CPU, all above -171 on another; same code).
    Gate("ppo-pendulum", "ppo", "gymnax/Pendulum-v1", 8, 999_424, -200.0, MEAN_LOWER_95,
         "docs/algorithms.md learning gates: PPO Pendulum, mean of seeds 0-7 well above -200"),
    Gate("td3-pendulum", "td3", "gymnax/Pendulum-v1", 8, 100_000, -250.0, EVERY_SEED,
         "docs/algorithms.md TD3: every seed passes -250 by 3e4 steps and stays near -150"),
    Gate("sac-pendulum", "sac", "gymnax/Pendulum-v1", 8, 20_000, -200.0, EVERY_SEED,
         "docs/algorithms.md SAC: every seed >= -200 at 2e4 steps"),
    # DQN is judged by its greedy policy too: all 16 documented seeds score 500 greedy, while the
    # ε-greedy training return of about one run in 25-40 ends a little below 475 (seeds 0-7:
    # 499.2 to 500), so a change of rounding alone could flip that criterion for one seed.
    Gate("dqn-cartpole", "dqn", "gymnax/CartPole-v1", 8, 500_000, 475.0, EVERY_SEED,
         "docs/algorithms.md DQN: greedy 500 on every one of seeds 0-15 within 5e5 steps",
         greedy_episodes=10),
    Gate("qlearning-gridworld", "qlearning", "native/GridWorld", 30, 100_000, -4.8, MEAN_LOWER_95,
         "docs/algorithms.md Q-learning: 30 agents x 1e5 steps, -4.64 +- 0.02"),
    # Memory: the bsuite preset of each recurrent algorithm on MemoryChain (the context is seen
    # only at the start; a feed-forward agent stays at chance, 0). ppo_rnn: 1.00 on every one of
    # seeds 0-7; pqn_rnn: 0.93-0.97 (its ε-greedy answers cost the rest; greedy 1.00 on all 8).
    Gate("ppo_rnn-memorychain", "ppo_rnn", "gymnax/MemoryChain-bsuite", 8, 98_304, 0.8,
         EVERY_SEED, "docs/algorithms.md PPO-RNN: 1.00 on every seed, feed-forward PPO at 0"),
    Gate("pqn_rnn-memorychain", "pqn_rnn", "gymnax/MemoryChain-bsuite", 8, 98_304, 0.8,
         EVERY_SEED, "docs/algorithms.md PQN-RNN: 0.93-0.97 on every seed, PQN at 0"),
    # MinAtar at a budget a CI run affords: PPO's minatar preset (PureJaxRL's setting) on
    # Breakout-MinAtar for 1e6 steps (lr annealed over them) instead of the preset's 5e6. A
    # uniformly random policy scores 0.41 (tools/random_policy_return.py, 12,554 episodes), a
    # rate that learns too slowly (lr 5e-4) leaves most seeds at 6-7, and one seed in eight may stay
    # there (seed 1: 7.4), so the claim is on the mean: measured 25.17 +- 6.74 over seeds 0-7.
    Gate("ppo-breakout-minatar", "ppo", "gymnax/Breakout-MinAtar", 8, 999_424, 15.0,
         MEAN_LOWER_95, "docs/algorithms.md PPO Breakout-MinAtar, 1e6-step gate",
         total_timesteps=1_000_000),
    # MinAtar through the value-based path: PQN's minatar preset (purejaxql's pqn_minatar.yaml:
    # the 3x3 convolution torso, LayerNorm, Q(lambda)) on Breakout-MinAtar for 1e6 of its 5e6
    # steps, judged by the greedy policy (the masked argmax of its Q-values). PPO's MinAtar
    # gate above reads the flattened planes with an MLP, so only this one trains the
    # convolution. Measured greedy 18.6 and 12.6 on seeds 0 and 1 (random policy: 0.41);
    # with the torso fed only the first plane (the paddle) both end at 0.6, with the
    # argmax taking the lowest Q at 0.0 (`tools/gate_mutants.py`; no other gate trains this
    # torso).
    Gate("pqn-breakout-minatar", "pqn", "gymnax/Breakout-MinAtar", 2, 999_424, 8.0, EVERY_SEED,
         "docs/algorithms.md learning gates: PQN Breakout-MinAtar, 1e6-step gate",
         total_timesteps=1_000_000, greedy_episodes=10),
    # Multi-agent: IPPO's mpe preset (JaxMARL's ippo_ff_mpe.yaml) on simple_spread for 2e6 of
    # its 1e7 steps. Team return of three uniformly random agents: -82.97
    # (tools/random_policy_return.py, 6,400 episodes).
    Gate("ippo-mpe-spread", "ippo", "jaxmarl/MPE_simple_spread_v3", 4, 1_998_848, -65.0,
         EVERY_SEED, "docs/adapters-jaxmarl.md IPPO: 2e6-step gate",
         total_timesteps=2_000_000),
    # MAPPO on the same preset (its centralised critic the only difference) for 1e6 steps:
    # measured -59.50 +- 0.70 over seeds 0-3 (worst -59.93).
    Gate("mappo-mpe-spread", "mappo", "jaxmarl/MPE_simple_spread_v3", 4, 999_424, -65.0,
         EVERY_SEED, "docs/adapters-jaxmarl.md MAPPO: 1e6-step gate",
         total_timesteps=1_000_000),
]


# AlphaZero on tic_tac_toe (the game is a draw under perfect play): playing with its search, each
# member wins or draws at least 85% of 200 games (half of them first) against the search player
# with 256 simulations a move. Measured 91.5-100% per member (docs/algorithms.md AlphaZero: the
# figure depends on the CPU); one update of training gives 14% and 44.5%: the threshold needs
# learning.
ALPHAZERO = Gate("alphazero-tictactoe-vs-mcts", "alphazero", "pgx/tic_tac_toe", 2, 491_520, 0.85,
                 EVERY_SEED, "docs/algorithms.md AlphaZero: with search, wins or draws >= 85% of "
                 "its games against mcts:256",
                 total_timesteps=491_520, sets={"num_simulations": "64"})
ALPHAZERO_GAMES, ALPHAZERO_OPPONENT = 200, "mcts:256"


def test_alphazero_gate_wins_or_draws_with_search(tmp_path: Path) -> None:
    import jax

    import rl_algos
    import rl_envs
    from rl_cli.evaluate import load_agent

    started = time.perf_counter()
    summary = _train(ALPHAZERO, tmp_path)
    run = load_agent(summary["run_dir"])
    plan = rl_algos.get("alphazero").make_planner(run.env, run.config)
    engine = rl_envs.arena(ALPHAZERO.env)
    opponent = engine.builtin(ALPHAZERO_OPPONENT)
    rates = []
    for i in range(len(run.members)):
        agent = run.member(i)
        result = jax.jit(lambda k, a=agent: engine.play(
            lambda s, obs, legal, key: plan(a, s, key), opponent, ALPHAZERO_GAMES, k))(
            jax.random.PRNGKey(i))
        score, finished = np.asarray(result.score), np.asarray(result.finished)
        assert finished.all()
        rates.append(float(np.mean(score >= 0)))
    _check(ALPHAZERO, np.array(rates), started, summary,
           metric=f"win-or-draw rate with search over {ALPHAZERO_GAMES} games vs "
                  f"{ALPHAZERO_OPPONENT}")


def _log(record: dict[str, Any]) -> None:
    path = os.environ.get("RL_GATES_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(record) + "\n")


def _train(gate: Gate, tmp_path: Path, eval_episodes: int = 0) -> dict[str, Any]:
    req = RunRequest(algo=gate.algo, env=gate.env, num_seeds=gate.num_seeds, seed=0,
                     total_timesteps=gate.total_timesteps, sets=dict(gate.sets),
                     env_kwargs=dict(gate.env_kwargs), logdir=tmp_path, run_name=gate.name,
                     progress=False, eval_episodes=eval_episodes, checkpoint_minutes=0.0,
                     watchdog_seconds=1800.0)
    return execute(req)


def _check(gate: Gate, values: np.ndarray, started: float, summary: dict[str, Any],
           metric: str = "final return") -> None:
    mean, ci = mean_ci95(values)
    record = {"gate": gate.name, "metric": metric, "per_seed": [float(v) for v in values],
              "mean": mean, "ci95": ci, "threshold": gate.threshold, "rule": gate.rule,
              "steps": summary["total_timesteps"], "compile_s": summary["compile_seconds"],
              "run_s": summary["run_seconds"], "wall_s": time.perf_counter() - started}
    _log(record)
    what = (f"{gate.name}: {metric} per seed {np.round(values, 2).tolist()}, mean {mean:.2f} "
            f"+- {ci:.2f}; required: {gate.rule} >= {gate.threshold} ({gate.claim})")
    assert summary["total_timesteps"] == gate.steps, (
        f"{gate.name}: the preset's budget is {summary['total_timesteps']} steps, the documented "
        f"one {gate.steps}: update the docs and this gate together")
    assert values.shape == (gate.num_seeds,)
    if gate.rule == EVERY_SEED:
        assert np.all(values >= gate.threshold), what
    else:
        assert np.isfinite(mean) and mean - ci >= gate.threshold, what


@pytest.mark.parametrize("gate", GATES, ids=lambda g: g.name)
def test_learning_gate(gate: Gate, tmp_path: Path) -> None:
    started = time.perf_counter()
    summary = _train(gate, tmp_path, eval_episodes=gate.greedy_episodes)
    key, metric = "final_return_per_member", "final return"
    if gate.greedy_episodes:
        key = "greedy_eval_return_per_member"
        metric = f"greedy evaluation ({gate.greedy_episodes} episodes per seed)"
    values = np.array([np.nan if r is None else r for r in summary[key]])
    _check(gate, values, started, summary, metric=metric)


# PPO's board_game preset on tic_tac_toe against the random opponent, 2e6 steps: both documented
# members win or draw 95.6% and 97.2% of 1000 greedy games (target 90%, docs/adapters-pgx.md).
PGX = Gate("ppo-tictactoe-vs-random", "ppo", "pgx/tic_tac_toe", 4, 1_998_848, 0.90, EVERY_SEED,
           "docs/adapters-pgx.md: PPO tic_tac_toe wins or draws >= 90% of greedy games vs "
           "random", env_kwargs={"opponent": "random"})
PGX_GAMES = 1000


def test_pgx_gate_wins_or_draws_against_random(tmp_path: Path) -> None:
    from rl_cli.evaluate import evaluate

    started = time.perf_counter()
    summary = _train(PGX, tmp_path)
    rates = evaluate(summary["run_dir"], episodes=PGX_GAMES, opponent="random").outcome_rates()
    _check(PGX, rates["win_rate"] + rates["draw_rate"], started, summary,
           metric=f"greedy win-or-draw rate over {PGX_GAMES} games vs random")
