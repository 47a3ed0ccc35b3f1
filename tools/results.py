"""The results report: runs a named suite of (algorithm, task) pairs with N seeds each through the
same path as `rl run` (`rl_cli.runner.execute`: presets, vmapped seeds, the final greedy
evaluation) and writes `docs/results.md` from the accumulated rows in `docs/results.json`.

Per row: the budget, the greedy evaluation of the final agents (`--eval-episodes` episodes per
member; the per-member mean is the unit) and the training return of the behaviour policy (the
episodes that ended in the run's final window, `rl_core.final_return`), each as its interquartile
mean with a 95% percentile-bootstrap confidence interval over seeds (`rl_cli.stats.iqm`,
`bootstrap_ci95`: scipy's `trim_mean` and `bootstrap`), the worst seed, the compile and training
wall time, the published reference it is set against (with its source), the commit the row
was produced at, and the training curve (`compact_curve`). A suite's published comparisons
(`COMPARISONS`: DPO against PPO on MinAtar) are checked from its rows. Running one suite
replaces that suite's rows and keeps the others, so the document always says which commit
each row comes from.

    uv run python tools/results.py --suite classic --seeds 8
    uv run python tools/results.py --suite minatar --seeds 4
    uv run python tools/results.py --suite classic --seeds 8 --only qlearning   # rerun rows
    uv run python tools/results.py --suite minatar --seeds 4 --only dpo@gymnax/Asterix-MinAtar \\
        --keep-runs runs/results   # keep the run directories (losses, KL, entropy) to study
    uv run python tools/results.py --list

With `--keep-runs`, a row's run checkpoints every `KEPT_CHECKPOINT_MINUTES`, and a row whose kept
run stopped before its end (a signal, a closed session) continues from its newest checkpoint the
next time the row is asked for (`rl resume`: bitwise as if uninterrupted on the same processor,
jax version and code; a changed setting is refused): a row longer than one session is produced
over several. The row then says how many sessions it took, every machine that computed it, and
the commit its run started at where that is not the one it ended at.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rl_cli.errors import RunStopped, Terminated, UserError
from rl_cli.stats import GAME_OUTCOMES

REPO = Path(__file__).resolve().parents[1]
STORE = REPO / "docs" / "results.json"
DOC = REPO / "docs" / "results.md"
# Documents that quote a suite's rows between `<!-- results:SUITE -->` and `<!-- /results -->`
# (rewritten with the report, never by hand).
QUOTING = [REPO / "docs" / "algorithms.md", REPO / "README.md"]


@dataclass(frozen=True)
class Task:
    algo: str
    env: str
    steps: int | None = None  # None: the preset's budget
    reference: str = ""  # the published figure this is set against, with its source
    sets: dict[str, str] = field(default_factory=dict)
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    eval_episodes: int = 100


PUREJAXRL = "PureJaxRL (Lu et al., 2022) `ppo.py`, CartPole-v1: return 500 within 5e5 steps"
MINATAR_GAMES = ("Breakout", "Asterix", "Freeway", "SpaceInvaders")
_GYMNAX_PPO = {"Breakout": 28, "Asterix": 15, "Freeway": 58, "SpaceInvaders": 131}
_MINATAR_DQN = {"Breakout": 10, "Asterix": 17, "Freeway": 50, "SpaceInvaders": 43}
MINATAR_REFERENCES: dict[tuple[str, str], str] = {
    **{("ppo", g): f"gymnax README checkpoint table (Lange, 2022; gymnax-blines PPO, 1e7 steps, "
                   f"one seed, stochastic policy): {r}" for g, r in _GYMNAX_PPO.items()},
    **{("dpo", g): "Lu et al., 2022 (DPO) plot DPO against PPO on MinAtar; their values are not "
                   f"transcribed here: the PPO row is the comparison (gymnax PPO: {r})"
       for g, r in _GYMNAX_PPO.items()},
    **{("pqn", g): "Gallici et al., 2024 (PQN): purejaxql's `pqn_minatar.yaml` trains 1e7 "
                   "steps; no per-game MinAtar figure transcribed here (the paper's appendix "
                   "was not reachable)" for g in MINATAR_GAMES},
    **{("dqn", g): f"Young & Tian, 2019 (MinAtar) DQN learning curves, 5e6 frames, 30 seeds, on "
                   f"the original MinAtar (sticky actions 0.1, all 6 actions): about {r}"
       for g, r in _MINATAR_DQN.items()},
}
MINATAR_REFERENCES["pqn", "Asterix"] += (": the authors' PQN notebook shows a greedy return of "
                                         "about 71 at 1e7 (3 seeds)")
MINATAR_REFERENCES.update({  # the budget cut, stated in the row itself
    ("pqn", g): MINATAR_REFERENCES["pqn", g] + "; run here at 5e6 steps, half the paper's 1e7, "
                                               "to fit four seeds on a 2-core CPU"
    for g in MINATAR_GAMES})
SUITES: dict[str, list[Task]] = {
    "classic": [
        Task("ppo", "gymnax/CartPole-v1", reference=PUREJAXRL),
        Task("dpo", "gymnax/CartPole-v1", reference="Lu et al., 2022 (DPO): solves CartPole-v1"),
        Task("vpg", "gymnax/CartPole-v1",
             reference="Sutton & Barto REINFORCE with baseline: no fixed published budget"),
        Task("pqn", "gymnax/CartPole-v1",
             reference="purejaxql `pqn_cartpole` (Gallici et al., 2024): greedy test return 500 "
                       "within 5e5 steps"),
        Task("ppo", "gymnax/Pendulum-v1",
             reference="CleanRL/PureJaxRL continuous PPO: about −200 or better at 1e6 steps"),
        Task("dpo", "gymnax/Pendulum-v1",
             reference="Lu et al., 2022 (DPO) report DPO at least on par with PPO on Pendulum"),
        Task("td3", "gymnax/Pendulum-v1",
             reference="rejax TD3, same settings, measured on this machine: final about −145 "
                       "at 1e5 steps (shared/ECOSYSTEM-NOTES.md)"),
        Task("sac", "gymnax/Pendulum-v1",
             reference="Haarnoja et al., 2018: Pendulum solved (≥ −200) within about 2e4 steps"),
        Task("dqn", "gymnax/CartPole-v1",
             reference="CleanRL `dqn.py` benchmark (Huang et al., 2022): CartPole-v1 about 490 "
                       "at 5e5 steps"),
        Task("ppo_rnn", "gymnax/MemoryChain-bsuite", steps=100_000,
             reference="bsuite memory_len (Osband et al., 2020): a memory agent scores 1.0"),
        Task("pqn_rnn", "gymnax/MemoryChain-bsuite", steps=100_000,
             reference="bsuite memory_len (Osband et al., 2020): a memory agent scores 1.0"),
        Task("qlearning", "native/GridWorld",
             reference="shortest path from every cell (the optimal return)"),
    ],
    # The four MinAtar games for PPO and DPO at 1e7 steps and for PQN and DQN at 5e6 (half the
    # PQN paper's budget: what this CPU holds for four seeds of the value-based methods).
    "minatar": [
        *(Task(algo, f"gymnax/{game}-MinAtar", steps=steps, eval_episodes=10,
               reference=MINATAR_REFERENCES[algo, game])
          for algo, steps in (("ppo", 10_000_000), ("dpo", 10_000_000), ("pqn", 5_000_000),
                              ("dqn", 5_000_000))
          for game in MINATAR_GAMES),
    ],
    "brax": [
        Task("ppo", "brax/inverted_pendulum", steps=1_000_000, eval_episodes=10,
             reference="brax training results: inverted_pendulum 1000 (the episode maximum)"),
        Task("td3", "brax/inverted_pendulum", steps=100_000, eval_episodes=10,
             reference="brax training results: inverted_pendulum 1000 (the episode maximum)"),
        Task("sac", "brax/inverted_pendulum", steps=100_000, eval_episodes=10,
             reference="brax training results: inverted_pendulum 1000 (the episode maximum)"),
    ],
    "jumanji": [
        Task("ppo", "jumanji/Snake-v1", eval_episodes=10,
             reference="jumanji's A2C Snake benchmark (Bonnet et al., 2024)"),
    ],
    "pgx": [
        Task("pqn", "pgx/tic_tac_toe", steps=1_000_000, env_kwargs={"opponent": "random"},
             eval_episodes=200, reference="optimal play never loses; random opponent"),
    ],
}


# Rows below their published reference, with the cause as measured (the run that shows it and
# its command); rendered under the suite's table.
BELOW_REFERENCE: dict[tuple[str, str, str], str] = {
    ("minatar", "ppo", "gymnax/Asterix-MinAtar"):
        "the preset. With gymnax-blines' own Asterix settings (lr 5e-4 not annealed, γ 0.999, "
        "ReLU MLP 256-256; its 5% warm-up left out), `uv run rl run --algo ppo --env "
        "gymnax/Asterix-MinAtar --num-seeds 2 --total-timesteps 1e7 --set lr=5e-4 --set "
        "gamma=0.999 --set hidden_sizes=256,256 --set anneal_lr=false --eval-episodes 10`, the "
        "same PPO ends at greedy 26.3 and 35.9 (seeds 0 and 1, 10 episodes) and training return "
        "10.8 and 13.9, where the `minatar` preset (PureJaxRL's setting: lr 5e-3 annealed, "
        "γ 0.99, 64-64) ends the same seeds at greedy 6.4 and 15.8 (this row)",
    ("minatar", "dpo", "gymnax/Asterix-MinAtar"):
        "the step size. DPO's drift (α 2, β 0.6) grows only once (r − 1)·A passes about α (or "
        "log(r)·A about β), where PPO clips at |r − 1| = 0.2, and at the preset's lr 5e-3 its "
        "updates move the policy further: over the first tenth of training the mean approximate "
        "KL of an update is 0.055 against PPO's 0.030 (the two rows' runs, kept with "
        "`--keep-runs`; `uv run rl plot PPO_RUN PPO_HALF_LR_RUN DPO_RUN DPO_HALF_LR_RUN --metric "
        "loss/approx_kl -o docs/figures/results-minatar-asterix-dpo-kl.png`, the figure below). "
        "At half the rate, `uv run rl run --algo dpo --env gymnax/Asterix-MinAtar --num-seeds 4 "
        "--total-timesteps 1e7 --set lr=2.5e-3 --eval-episodes 10`, that KL is 0.032 and the "
        "same seeds end at greedy 12.9, 18.3, 15.5 and 5.9 (IQM 14.2 [5.9, 18.3]; training-return "
        "IQM 8.5 against this row's 3.4). PPO at that rate (the same command with `--algo ppo`; "
        "KL 0.018) ends at greedy 26.3, 11.3, 10.9 and 12.8 (IQM 12.1 [10.9, 26.3]; training "
        "14.7): at equal rates the greedy returns are level, so the gap of this row to PPO's is "
        "the preset's rate being too large for DPO. DPO's training return stays below PPO's at "
        "either rate, and so does its policy's sharpness: its entropy falls to about 0.95 "
        "within the first 3% of training (PPO's is still at 1.1 there), then stays between 0.82 "
        "and 1.02, where PPO's keeps falling, to 0.37 and 0.41 (`--metric loss/entropy`, the "
        "second figure below). "
        "![approximate KL per update, PPO and DPO on Asterix at two rates](figures/"
        "results-minatar-asterix-dpo-kl.png) "
        "![policy entropy, PPO and DPO on Asterix at two rates](figures/"
        "results-minatar-asterix-dpo-entropy.png)",
    ("minatar", "dpo", "gymnax/Freeway-MinAtar"):
        "mostly the step size. At half the learning rate, `uv run rl run --algo dpo --env "
        "gymnax/Freeway-MinAtar --num-seeds 4 --total-timesteps 1e7 --set lr=2.5e-3 "
        "--eval-episodes 10`, the same seeds end at greedy 60.5, 55.6, 59.1 and 53.2 (IQM 57.4 "
        "[53.2, 60.5]; training-return IQM 57.6 against this row's 48.8), with an approximate KL "
        "per update over the first tenth of training of 0.033, what PPO's row moves at the "
        "preset's rate (0.032). PPO at the half rate (the same command with `--algo ppo`; KL "
        "0.020) ends at greedy 57.1, 63.0, 59.9 and 62.6 (IQM 61.3 [57.1, 63.0]; training 62.0): "
        "at equal rates DPO is about 4 lower, the intervals overlapping, and, as on Asterix and "
        "SpaceInvaders, its policy stays less sharp (entropy over the last half of training "
        "0.21–0.45 against PPO's 0.10–0.17; the figure below). "
        "![policy entropy, PPO and DPO on Freeway](figures/"
        "results-minatar-freeway-dpo-entropy.png)",
    ("minatar", "dpo", "gymnax/SpaceInvaders-MinAtar"):
        "the drift's shape, on both sides of the advantage; not the step size, the drift's "
        "width or the entropy bonus. At half "
        "the learning rate, `uv "
        "run rl run --algo dpo --env gymnax/SpaceInvaders-MinAtar --num-seeds 4 "
        "--total-timesteps 1e7 --set lr=2.5e-3 --eval-episodes 10`, the same seeds end at greedy "
        "173, 171, 175 and 181 (IQM 174.0; training-return IQM 151.3 against this row's 141.5). "
        "PPO at that rate (the same command with `--algo ppo`) ends at greedy 183, 184, 186 and "
        "190 (IQM 185.0 [183.0, 190.0]; training 182.0), as its row does. At equal rates the two "
        "move the policy equally far per update (approximate KL over the first tenth of "
        "training 0.019 for DPO, 0.018 for PPO) and DPO still ends lower. As on Asterix, its "
        "policy stops sharpening: over the last half of training its entropy is 0.66–0.83 "
        "against PPO's 0.38–0.43 (`uv run rl plot PPO_RUN DPO_RUN --metric loss/entropy`, the "
        "figure below). Without the entropy bonus (the half-rate command with `--set "
        "ent_coef=0`) its entropy over the last half of training is 0.51–0.71, still above "
        "PPO's with the bonus, and the same seeds end at greedy 176, 181, 180 and 142 (IQM "
        "178.0) with a training-return IQM of 155.8, against PPO's 182.0 at that rate: the "
        "bonus accounts for a few points of DPO's training return, not for the gap. Nor does "
        "the drift's width: ten times narrower (the half-rate command with `--set alpha=0.2 "
        "--set beta=0.06`, an approximate KL per update of 0.005) the same seeds end at greedy "
        "172, 169, 173 and 174 (IQM 172.5; training 146.1 [141.9, 153.6]; entropy 0.78–0.84). "
        "Its shape does, as the training return shows: "
        "`uv run python tools/dpo_halves.py --env gymnax/SpaceInvaders-MinAtar --seeds 4 "
        "--total-timesteps 1e7 --set lr=2.5e-3` trains DPO with one half of its objective "
        "replaced by PPO's clipped surrogate. With PPO's clip for negative advantages (DPO's "
        "log(r)·A penalty gone) the seeds end at greedy 177, 179, 185 and 173 (IQM 178.0 [173.0, "
        "185.0]) and a training-return IQM of 170.2 [167.9, 171.3] (entropy over the last half "
        "0.57–0.70); with PPO's clip "
        "for positive advantages, at 179, 182, 179 and 184 (IQM 180.5 [179.0, 184.0]), training "
        "160.2 [157.3, 161.1] "
        "(entropy 0.54–0.56). Each half of the drift costs part of the gap to PPO (training "
        "182.0, greedy 185.0), the negative half the larger share of the training return (18.9 "
        "of its 30.7 points, the positive half 8.9), and each keeps the policy less sharp than "
        "PPO's clip does. On the greedy return the two variants lie between DPO and PPO, their "
        "intervals overlapping both, so 4 seeds place the gap in both halves by the training "
        "return alone. "
        "![policy entropy, PPO and DPO on SpaceInvaders at lr 2.5e-3](figures/"
        "results-minatar-spaceinvaders-dpo-entropy.png)",
    ("minatar", "dqn", "gymnax/Asterix-MinAtar"):
        "its training return, not its greedy one; measured in part: the preset's one gradient "
        "step per 4 environment steps. Young & Tian's curves are of the training policy (ε 0.1 "
        "after the first 1e5 steps); this row's training return levels off at about 11 from "
        "1.5e6 steps (10.1–11.5 per seed at 5e6) where theirs reaches about 17, and its greedy "
        "policy's 25.1 lies above that. With one gradient step per environment step (the target "
        "then copied every 1,000 gradient steps), both as theirs, `uv run rl run --algo "
        "dqn --env gymnax/Asterix-MinAtar --num-seeds 2 --total-timesteps 1e6 --set "
        "eps_decay=0.1 --set gradient_steps=4 --eval-episodes 10` (the row's ε schedule over "
        "1e6 steps) reaches a training return of 15.9 and 15.5 at 1e6 steps, where this row's "
        "seeds stood at 9.2–10.7, and none went above 13.2 up to 5e6; its greedy returns are 24.8 "
        "and 38.7. Whether it reaches 17 by 5e6 is not measured (it costs 4 times the row's "
        "compute), nor what the other differences add: Adam and Double DQN targets (theirs "
        "RMSProp and the target network's max), and gymnax's Asterix (5 actions, no sticky "
        "actions, episodes cut at 1,000 steps) for the original (all 6 actions, sticky actions "
        "0.1)",
    ("pgx", "pqn", "pgx/tic_tac_toe"):
        "missed blocks, which more training reduces, and forks, which neither the random nor the "
        "greedy opponent plays for. `uv run python tools/tictactoe_exact.py RUN_DIR`, on the "
        "row's run (kept with `--keep-runs`), computes each greedy agent's outcome exactly over "
        "the game tree, the random player's replies weighted by their probability, and charges "
        "each loss to the agent's last move before it. The 8 agents lose 0.52% of their games "
        "(worst 0.69%; the row's 200 sampled games per seed see the same through sampling "
        "noise), all as the second player: 0.35 percentage points after a missed block (the "
        "opponent had one cell completing a line and the agent did not take it) and 0.17 after "
        "a fork (two such cells: no move blocks both, the fault is an earlier move). Four times "
        "the budget, `uv run rl run --algo pqn --env pgx/tic_tac_toe --env-arg opponent=random "
        "--num-seeds 8 --total-timesteps 4e6`, halves the loss to 0.24%: missed blocks 0.07, "
        "forks still 0.17. The same command at the row's 1e6 steps with `--env-arg "
        "opponent=mixed` (the greedy player, which completes its own line or blocks the agent's, "
        "in half the games) cuts the missed blocks to 0.03 but raises the forks to 0.60 (loss "
        "0.63%). Likely, though not tested here: neither training opponent sets up a fork on "
        "purpose, so the agents seldom learn from one; a search opponent (`opponent=mcts:N`) or "
        "self-play would",
}


@dataclass(frozen=True)
class Comparison:
    """A published claim that one algorithm does at least as well as another on a suite's tasks,
    checked per task from the two rows' greedy returns."""
    algo: str
    baseline: str
    claim: str  # the claim as published, with its source
    settings: str  # the settings both rows used and why


COMPARISONS: dict[str, list[Comparison]] = {
    "minatar": [Comparison(
        "dpo", "ppo",
        claim="Lu et al., 2022 (Discovered Policy Optimisation) report that LPO and its closed "
              "form DPO, found by meta-learning a drift on brax's Ant, transfer to unseen "
              "settings, these four MinAtar games among them, where they plot DPO against "
              "PPO; read here as DPO doing at least as well as PPO on each game",
        settings="both rows use PPO's `minatar` preset, PureJaxRL's MinAtar setting (64 envs × "
                 "128 steps, 4 epochs × 8 minibatches, ReLU MLP 64-64, lr 5e-3 annealed), and "
                 "DPO adds only its drift (α 2, β 0.6). The paper's own MinAtar settings (by "
                 "report brax's PPO hyperparameters) were not checked: only its abstract and "
                 "introduction were reachable, and the authors' code "
                 "(luchris429/discovered-policy-optimisation) holds only the brax runs. The "
                 "same settings for both is what the comparison needs, and this one is the "
                 "setting our PPO reference (gymnax/PureJaxRL) is measured in")],
}


def commit() -> str:
    """The commit the rows are produced at, `+dirty` when the tree has local changes: the one
    every run records (`rl_cli.machine.source_commit`)."""
    from rl_cli.machine import source_commit

    return source_commit() or "unknown"


def summarise(values: list[float | None]) -> dict[str, Any]:
    """IQM, its 95% bootstrap interval, mean and worst seed of per-seed values."""
    from rl_cli.stats import bootstrap_ci95, iqm

    v = np.array([np.nan if x is None else x for x in values], np.float64)
    low, high = bootstrap_ci95(v, iqm)
    finite = v[np.isfinite(v)]
    return {"iqm": iqm(v), "ci95": [low, high],
            "mean": float(finite.mean()) if finite.size else None,
            "min": float(finite.min()) if finite.size else None,
            "per_seed": [None if not np.isfinite(x) else float(x) for x in v]}


KEPT_CHECKPOINT_MINUTES = 10.0  # a kept row's run loses at most this much to an abrupt end


def task_request(task: Task, seeds: int, logdir: Path, checkpoint_minutes: float) -> Any:
    """The `rl run` request of a row (`rl_cli.request.RunRequest`)."""
    from rl_cli.request import RunRequest

    return RunRequest(algo=task.algo, env=task.env, num_seeds=seeds, total_timesteps=task.steps,
                      sets=dict(task.sets), env_kwargs=dict(task.env_kwargs), logdir=logdir,
                      progress=False, eval_episodes=task.eval_episodes,
                      checkpoint_minutes=checkpoint_minutes)


SAME_ROW = ("algo", "env", "num_seeds", "seed", "total_timesteps", "sets", "env_kwargs",
            "eval_episodes")  # the request fields that make a kept run this row's


def unfinished_run(logdir: Path, task: Task, seeds: int) -> Path | None:
    """The newest run under `logdir` (`--keep-runs`) that is this row's (`SAME_ROW` of its
    recorded request) and stopped before its end: it has a checkpoint and no summary.json.
    None when there is none, and for a temporary `logdir`'s empty one."""
    from rl_cli.checkpoint import list_checkpoints

    want = {k: v for k, v in vars(task_request(task, seeds, logdir, 0.0)).items()
            if k in SAME_ROW}
    found = []
    for config in logdir.glob("*/config.json"):
        run_dir = config.parent
        try:
            request = json.loads(config.read_text()).get("request") or {}
        except (OSError, ValueError):
            continue
        if ({k: request.get(k) for k in SAME_ROW} == want
                and not (run_dir / "summary.json").exists() and list_checkpoints(run_dir)):
            found.append(run_dir)
    return max(found, key=lambda d: d.stat().st_mtime, default=None)


def machines(config: dict[str, Any]) -> str:
    """Every machine that computed a run (`rl_cli.machine.machine_line`), the one it started on
    first and each resume's where it differs: e.g. "AMD EPYC, 1 device, jax 0.10.2"."""
    from rl_cli.machine import machine_line

    lines = [machine_line(config)]
    for resumed in config.get("resumed", []):
        if machine_line(resumed) not in lines:
            lines.append(machine_line(resumed))
    return " then ".join(lines)


def run_task(task: Task, seeds: int, logdir: Path, kept: bool = False) -> dict[str, Any]:
    """One row: the task's run, a fresh one or (`kept`: `logdir` is `--keep-runs`) the
    continuation of this row's unfinished kept run (`unfinished_run`). A continued row's times
    count every session's training (`run_seconds_total`); its compile time is the last
    session's."""
    from rich.console import Console

    from rl_cli.after import summary_outcomes
    from rl_cli.plots import load_curves
    from rl_cli.resume import resume_request
    from rl_cli.runner import execute

    t0 = time.perf_counter()
    resume_dir = unfinished_run(logdir, task, seeds) if kept else None
    if resume_dir is None:
        req = task_request(task, seeds, logdir, KEPT_CHECKPOINT_MINUTES if kept else 0.0)
    else:
        print(f"  continuing {resume_dir}", file=sys.stderr, flush=True)
        req = resume_request(resume_dir, progress=False)
    summary = execute(req, console=Console(quiet=True), resume_dir=resume_dir)
    run_dir = Path(summary["run_dir"])
    config = json.loads((run_dir / "config.json").read_text())
    earlier = summary["run_seconds_total"] - summary["run_seconds"]  # earlier sessions' training
    curves = load_curves(run_dir)
    outcomes = summary_outcomes(summary)  # board games
    return {
        "algo": task.algo, "env": task.env, "env_kwargs": task.env_kwargs, "sets": task.sets,
        "seeds": seeds, "steps_per_seed": summary["total_timesteps"],
        "eval_episodes": task.eval_episodes,
        "greedy": summarise(summary["greedy_eval_return_per_member"]),
        "training": summarise(summary["final_return_per_member"]),
        "compile_seconds": summary["compile_seconds"],
        "run_seconds": summary["run_seconds_total"],
        "wall_seconds": time.perf_counter() - t0 + earlier, "reference": task.reference,
        "machine": machines(config),
        **({"sessions": 1 + len(config["resumed"]), "started_commit": config.get("commit")}
           if config.get("resumed") else {}),
        "curve": compact_curve(curves.steps, curves.returns),
        **({"outcomes": outcomes} if outcomes else {}),
        "run_dir": summary["run_dir"],  # for --keep-runs to name; not stored
    }


def outcome_note(row: dict[str, Any]) -> str:
    """A board game row's greedy games as won / drawn / lost % (the seeds' mean) and the worst
    seed's losses, where the row has them (`run_task`), else ''."""
    if "outcomes" not in row:
        return ""
    rates = row["outcomes"]
    if set(rates) != set(GAME_OUTCOMES):  # a win rate alone (an environment that flags wins)
        return f"; won {100 * np.mean(rates['win_rate']):.1f}%"
    won, drawn, lost = (100 * np.mean(rates[k]) for k in GAME_OUTCOMES)
    return (f"; won / drawn / lost {won:.1f} / {drawn:.1f} / {lost:.1f}%, worst seed lost "
            f"{100 * max(rates['loss_rate']):.1f}%")


def compact_curve(steps: np.ndarray, returns: np.ndarray, points: int = 100) -> dict[str, Any]:
    """A run's training curve small enough to keep with its row: the logged chunks (`steps`
    `[T]`, each member's mean return of the episodes ending in a chunk, `returns` `[T, M]`, NaN
    where none ended) cut into at most `points` consecutive groups of chunks, each member's mean
    over a group (NaN-skipping) at the group's last step. JSON-ready: `{"steps": [P],
    "per_seed": [M][P]}`, null where a member finished no episode in the whole group."""
    groups = np.array_split(np.arange(len(steps)), min(points, len(steps)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a group where a member has no value
        means = np.stack([np.nanmean(returns[g], axis=0) for g in groups])  # [P, M]
    return {"steps": [int(steps[g[-1]]) for g in groups],
            "per_seed": [[None if not np.isfinite(v) else round(float(v), 3) for v in member]
                         for member in means.T]}


def _num(x: float | None, digits: int = 1) -> str:
    return "–" if x is None or not np.isfinite(x) else f"{x:,.{digits}f}"


def _digits(*stats: dict[str, Any]) -> int:
    """Decimals for a row's figures: two where every IQM and bound is below 10 in size (returns
    such as a board game's +1/0/-1 or MemoryChain's 1.0), else one."""
    values = [v for s in stats for v in (s["iqm"], *s["ci95"]) if v is not None]
    return 2 if all(abs(v) < 10 for v in values if np.isfinite(v)) else 1


def _stat(s: dict[str, Any], digits: int) -> str:
    """`IQM [low, high]` of one `summarise`d statistic."""
    return (f"{_num(s['iqm'], digits)} [{_num(s['ci95'][0], digits)}, "
            f"{_num(s['ci95'][1], digits)}]")


def figure_path(suite: str) -> Path:
    return DOC.parent / "figures" / f"results-{suite}.png"


def _panels(n: int, width: float, height: float) -> tuple[Any, Any, int]:
    """A figure of `n` panels, at most 4 a row (the unused ones hidden): `(fig, axes, cols)`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(n, 4)
    nrows = (n + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(width * cols, height * nrows), squeeze=False)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    return fig, axes, cols


def _save(fig: Any, title: str, out: Path, fontsize: int = 9) -> Path:
    import matplotlib.pyplot as plt

    fig.suptitle(title, fontsize=fontsize)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def write_figure(suite: str, rows: dict[str, Any]) -> Path:
    """One panel per row: each seed's greedy evaluation (dots) and training return (crosses),
    the IQM of each as a line, its bootstrap interval as a band."""
    fig, axes, cols = _panels(len(rows["rows"]), 3.2, 2.6)
    for ax, r in zip(axes.flat, rows["rows"], strict=False):
        for x, key, marker in ((0, "greedy", "o"), (1, "training", "x")):
            d = r[key]
            vals = [v for v in d["per_seed"] if v is not None]
            ax.scatter(np.full(len(vals), x) + np.linspace(-0.15, 0.15, len(vals)), vals,
                       marker=marker, s=14, alpha=0.7)
            if d["iqm"] is not None and np.isfinite(d["iqm"]):
                ax.hlines(d["iqm"], x - 0.3, x + 0.3, color="black", lw=1.5)
                ax.fill_between([x - 0.3, x + 0.3], *d["ci95"], color="gray", alpha=0.3, lw=0)
        ax.set_xticks([0, 1], ["greedy", "training"])
        ax.set_xlim(-0.6, 1.6)
        ax.set_title(f"{r['algo']} · {r['env'].split('/')[-1]}", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3, axis="y")
    return _save(fig, f"{suite}: per-seed returns,{' ' if cols > 2 else chr(10)}IQM (line) and "
                 "95% bootstrap CI (band)", figure_path(suite))


def curves_figure_path(suite: str) -> Path:
    return DOC.parent / "figures" / f"results-{suite}-curves.png"


def write_curves_figure(suite: str, rows: list[dict[str, Any]]) -> Path:
    """One panel per task, one line per algorithm: the mean over seeds of the training return
    along the run (`compact_curve`) with its 95% Student-t band over seeds."""
    from rl_cli.plots import mean_band, palette

    envs = list(dict.fromkeys(r["env"] for r in rows))
    cycle = palette()  # one colour per algorithm in every panel
    colour = {a: cycle[i % len(cycle)]
              for i, a in enumerate(dict.fromkeys(r["algo"] for r in rows))}
    fig, axes, cols = _panels(len(envs), 3.4, 2.8)
    for ax, env in zip(axes.flat, envs, strict=False):
        for r in (r for r in rows if r["env"] == env):
            steps = np.asarray(r["curve"]["steps"], np.float64)
            per_seed = np.array([[np.nan if v is None else v for v in m]
                                 for m in r["curve"]["per_seed"]], np.float64)  # [M, P]
            mean, half = mean_band(per_seed.T)
            # Points where no seed's episode ended are gaps; the line joins across them (long
            # fixed-length episodes, Freeway's, end in only some groups of chunks).
            ok = np.isfinite(mean)
            ax.plot(steps[ok], mean[ok], lw=1.2, label=r["algo"], color=colour[r["algo"]])
            ax.fill_between(steps[ok], (mean - half)[ok], (mean + half)[ok],
                            color=colour[r["algo"]], alpha=0.2, lw=0)
        ax.set_title(env.split("/")[-1], fontsize=8)
        ax.set_xlabel("environment steps per seed", fontsize=7)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return _save(fig, f"{suite}: training return, mean over seeds{' ' if cols > 2 else chr(10)}"
                 "with its 95% t interval (band)", curves_figure_path(suite))


def compare(a: dict[str, Any], b: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """Row `a` against row `b` on their greedy per-seed returns: the difference of their IQMs
    with a 95% percentile-bootstrap interval (seeds of each row resampled independently,
    `scipy.stats.bootstrap` with two samples) and a verdict: `higher` or `lower` where the
    interval excludes 0, `not resolved` where it holds 0, `too few seeds` where a row has fewer
    than two finite ones (no interval then). (The IQM is `rl_cli.stats.iqm`'s, as
    `scipy.stats.trim_mean(v, 0.25)`, vectorised over the resamples.)"""
    from scipy import stats

    from rl_cli.stats import iqm

    x, y = (np.array([v for v in r["greedy"]["per_seed"] if v is not None], np.float64)
            for r in (a, b))
    x, y = x[np.isfinite(x)], y[np.isfinite(y)]
    if min(x.size, y.size) < 2:
        diff = iqm(x) - iqm(y) if x.size and y.size else float("nan")
        return {"diff": float(diff), "ci95": [float("nan")] * 2, "verdict": "too few seeds"}
    diff = iqm(x) - iqm(y)
    if np.all(x == x[0]) and np.all(y == y[0]):  # no spread to resample
        low = high = diff
    else:
        def statistic(u: np.ndarray, v: np.ndarray, axis: int) -> np.ndarray:
            return stats.trim_mean(u, 0.25, axis=axis) - stats.trim_mean(v, 0.25, axis=axis)

        res = stats.bootstrap((x, y), statistic, n_resamples=10_000,
                              confidence_level=0.95, method="percentile", vectorized=True,
                              random_state=np.random.default_rng(seed))
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    verdict = "higher" if low > 0 else "lower" if high < 0 else "not resolved"
    return {"diff": float(diff), "ci95": [low, high], "verdict": verdict}


def compared_tasks(c: Comparison, rows: list[dict[str, Any]]
                   ) -> tuple[list[str], dict[tuple[str, str], dict[str, Any]]]:
    """The tasks (in row order) that have both of the comparison's rows, and the rows by
    `(algo, env)`."""
    by = {(r["algo"], r["env"]): r for r in rows}
    envs = [e for e in dict.fromkeys(r["env"] for r in rows)
            if (c.algo, e) in by and (c.baseline, e) in by]
    return envs, by


VERDICTS = {"higher": "supported", "lower": "contradicted", "not resolved": "not resolved",
            "too few seeds": "not tested"}


def comparison_lines(suite: str, rows: list[dict[str, Any]]) -> list[str]:
    """The suite's published comparisons (COMPARISONS) as a table per comparison, with a
    generated sentence on how the claim fares on each task that has both rows (supported where
    the difference's interval lies above 0, contradicted where it lies below, not resolved where
    it holds 0), and a link to `comparison_figure`'s figure."""
    lines: list[str] = []
    for c in COMPARISONS.get(suite, []):
        envs, by = compared_tasks(c, rows)
        lines += [f"### {c.algo.upper()} against {c.baseline.upper()}", "",
                  f"The claim: {c.claim}. Settings: {c.settings}.", ""]
        if not envs:
            lines += ["No task has both rows yet.", ""]
            continue
        lines += [f"| task | {c.baseline} greedy IQM [95% CI] | {c.algo} greedy IQM [95% CI] | "
                  f"{c.algo} − {c.baseline} [95% CI] | {c.algo} is | the claim |",
                  "| --- | --- | --- | --- | --- | --- |"]
        fate: dict[str, list[str]] = {v: [] for v in VERDICTS.values()}
        for env in envs:
            a, b = by[c.algo, env], by[c.baseline, env]
            d = compare(a, b)
            fate[VERDICTS[d["verdict"]]].append(env.split("/")[-1])
            dp = _digits(a["greedy"], b["greedy"])
            lines.append(
                f"| {env} | " + " | ".join(_stat(r["greedy"], dp) for r in (b, a))
                + f" | {_num(d['diff'], dp)} [{_num(d['ci95'][0], dp)}, {_num(d['ci95'][1], dp)}]"
                f" | {d['verdict']} | {VERDICTS[d['verdict']]} |")
        n = len(envs)
        parts = [f"{v} on {', '.join(tasks)}" for v, tasks in fate.items() if tasks]
        lines += ["", f"On the {n} task{'s' if n > 1 else ''} with both rows the claim is "
                      + "; ".join(parts) + f" (supported: the 95% interval of {c.algo.upper()} − "
                      f"{c.baseline.upper()} lies above 0; contradicted: below 0; not "
                      "resolved: it holds 0, so these seeds do not decide it).",
                  "", f"![{c.algo} against {c.baseline}]"
                      f"(figures/{comparison_figure_path(suite, c).name})", ""]
    return lines


def _train_seconds(row: dict[str, Any]) -> str:
    """A row's training seconds, with the sessions it took when more than one."""
    sessions = row.get("sessions", 1)
    return f"{row['run_seconds']:.0f}" + (f" ({sessions} sessions)" if sessions > 1 else "")


def comparison_figure_path(suite: str, c: Comparison) -> Path:
    return DOC.parent / "figures" / f"results-{suite}-{c.algo}-vs-{c.baseline}.png"


def comparison_figure(suite: str, c: Comparison, envs: list[str],
                      by: dict[tuple[str, str], dict[str, Any]]) -> Path:
    """Per task, each algorithm's greedy IQM with its 95% bootstrap interval (bar) and seeds
    (dots), side by side."""
    fig, axes, _ = _panels(len(envs), 2.4, 2.8)
    for ax, env in zip(axes.flat, envs, strict=False):
        for x, algo in enumerate((c.baseline, c.algo)):
            g = by[algo, env]["greedy"]
            seeds = [v for v in g["per_seed"] if v is not None]
            ax.scatter(np.full(len(seeds), x) + np.linspace(-0.12, 0.12, len(seeds)), seeds,
                       s=12, alpha=0.6, color=f"C{x}")
            ax.errorbar(x, g["iqm"], yerr=[[g["iqm"] - g["ci95"][0]], [g["ci95"][1] - g["iqm"]]],
                        fmt="s", color="black", capsize=4, ms=4)
        ax.set_xticks([0, 1], [c.baseline, c.algo])
        ax.set_xlim(-0.6, 1.6)
        ax.set_title(env.split("/")[-1], fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3, axis="y")
    return _save(fig, f"{suite}: {c.algo} against {c.baseline}, greedy return: seeds (dots), "
                 "IQM and 95% bootstrap CI", comparison_figure_path(suite, c), fontsize=8)


def write_doc(store: dict[str, Any]) -> None:
    lines = [
        "# Results",
        "",
        "Produced by `tools/results.py` (do not edit by hand: rerun the suite). Each row: the",
        "algorithm on its task at the stated budget, N seeds trained at once (vmapped) through",
        "`rl run`'s own path and preset. **Greedy** is the final agents' deterministic",
        "evaluation (each seed's mean return over the stated episodes); **training** is the",
        "behaviour policy's return over the episodes that ended in the run's final window. Both",
        "as the interquartile mean over seeds with a 95% percentile-bootstrap interval (scipy",
        "`trim_mean`, `bootstrap`), then the worst seed. Every seed plays the same evaluation",
        "episodes (the same start states: common random numbers, so seeds are compared on equal",
        "terms), so the greedy interval is over seeds given those episodes; on a task whose start",
        "state matters (Pendulum's start angle) the greedy figure also carries the luck of those",
        "few episodes, the training figure does not. Times are wall seconds on the 2-core CPU",
        "machine, often shared with other work, so indicative only; a row trained over several",
        "sessions (`--keep-runs` continues a stopped row's run from its checkpoint) counts every",
        "session's training and says how many it took. Rerun (`--only",
        "ALGO@ENV` at the row's commit; one continued over sessions at other commits names the",
        "one it started at first) on the processor model and jax version of its last",
        "column, a row's seeds come out bitwise the same; on another processor their rounding",
        "differs and the returns drift apart (why: `rl_cli.machine`). The reference is the",
        "published figure the row is set against; its source is named. Each row also keeps",
        "its training curve (each seed's training return along the run, in at most 100 groups",
        "of logged chunks), drawn per task in the suite's curves figure; a published comparison",
        "between two algorithms is checked task by task under its suite's table, from the",
        "difference of the two rows' greedy IQMs with a two-sample bootstrap interval.",
        "",
    ]
    for suite, rows in store.items():
        meta = rows["meta"]
        lines += [f"## {suite}", "",
                  f"`uv run python tools/results.py --suite {suite} --seeds {meta['seeds']}` "
                  f"(suite compute {meta['wall_seconds']:,.0f} s; each row's commit, date and "
                  "machine in its last columns).", "",
                  "| algo | task | steps/seed | seeds | greedy IQM [95% CI] | worst seed | "
                  "training IQM [95% CI] | compile s | train s | reference (source) | commit | "
                  "date | machine |",
                  "| --- | --- | ---: | ---: | --- | ---: | --- | ---: | ---: | --- | --- | --- "
                  "| --- |"]
        write_figure(suite, rows)
        for r in rows["rows"]:
            g, t = r["greedy"], r["training"]
            dp = _digits(g, t)
            task = r["env"] + "".join(f" {k}={v}" for k, v in r["env_kwargs"].items())
            lines.append(
                f"| {r['algo']} | {task} | {r['steps_per_seed']:,} | {r['seeds']} | "
                f"{_stat(g, dp)} ({r['eval_episodes']} ep.{outcome_note(r)}) | "
                f"{_num(g['min'], dp)} | {_stat(t, dp)} | "
                f"{r['compile_seconds']:.0f} | {_train_seconds(r)} | "
                f"{reference(suite, r)} | "
                f"{_commit_cell(r, meta)} |")
        done = {(r["algo"], r["env"]) for r in rows["rows"]}
        pending = [t for t in SUITES.get(suite, []) if (t.algo, t.env) not in done]
        if pending:
            lines += ["", "Not run yet (`--only ALGO@ENV` adds a row): " + ", ".join(
                f"{t.algo} on {t.env}" + (f" ({t.steps:,} steps)" if t.steps else "")
                for t in pending) + "."]
        lines += ["", f"![{suite}: per-seed returns](figures/{figure_path(suite).name})", ""]
        with_curve = [r for r in rows["rows"] if r.get("curve")]
        if with_curve:
            lines += [f"![{suite}: training curves]"
                      f"(figures/{write_curves_figure(suite, with_curve).name})", ""]
        without = [f"{r['algo']} on {r['env']}" for r in rows["rows"] if not r.get("curve")]
        if without:
            lines += ["Rows recorded before the report kept training curves (rerun with "
                      "`--only` to draw theirs): " + ", ".join(without) + ".", ""]
        below = [(r, BELOW_REFERENCE[suite, r["algo"], r["env"]]) for r in rows["rows"]
                 if (suite, r["algo"], r["env"]) in BELOW_REFERENCE]
        if below:
            lines += ["Rows below their reference, and their cause where it was measured:", ""]
            lines += [f"- {r['algo']} on {r['env']}: {cause}." for r, cause in below]
            lines += [""]
        lines += comparison_lines(suite, rows["rows"])
        for c in COMPARISONS.get(suite, []):
            envs, by = compared_tasks(c, rows["rows"])
            if envs:
                comparison_figure(suite, c, envs, by)
    DOC.write_text("\n".join(lines))


def reference(suite: str, row: dict[str, Any]) -> str:
    """The row's published reference as the suite now states it (a citation, not a measurement:
    correcting one needs no rerun), else as stored with the row."""
    for t in SUITES.get(suite, []):
        if (t.algo, t.env) == (row["algo"], row["env"]) and t.reference:
            return t.reference
    return row["reference"]


def _commit_cell(row: dict[str, Any], meta: dict[str, Any]) -> str:
    """`commit | date | machine` a row was measured with: the suite's commit and date, or the
    row's own when it was rerun alone (`--only`); the machine as the row's run recorded it
    (`rl_cli.machine`), "not recorded" for rows measured before runs recorded their
    processor. A row continued over sessions at other commits names the one its run started
    at first."""
    commit = f"`{row.get('commit', meta['commit'])}`"
    if row.get("started_commit"):
        commit = f"`{row['started_commit']}` → {commit}"
    return f"{commit} | {row.get('date', meta['date'])} | {row.get('machine', 'not recorded')}"


def quote(suite: str, rows: dict[str, Any]) -> list[str]:
    """The compact table of a suite's rows that other documents quote."""
    meta = rows["meta"]
    lines = [f"From [docs/results.md](results.md) (`tools/results.py --suite {suite} --seeds "
             f"{meta['seeds']}`): greedy evaluation and training return, interquartile mean over "
             "seeds [95% bootstrap CI], and the commit, date and machine of each row.", "",
             "| algo | task | steps/seed | seeds | greedy | worst seed | training | commit | "
             "date | machine |",
             "| --- | --- | ---: | ---: | --- | ---: | --- | --- | --- | --- |"]
    for r in rows["rows"]:
        g, t = r["greedy"], r["training"]
        dp = _digits(g, t)
        lines.append(f"| {r['algo']} | {r['env']} | {r['steps_per_seed']:,} | "
                     f"{r['seeds']} | {_stat(g, dp)} | {_num(g['min'], dp)} | {_stat(t, dp)} | "
                     f"{_commit_cell(r, meta)} |")
    return lines


def write_quotes(store: dict[str, Any]) -> None:
    """Rewrites every quoted block of QUOTING from the store (links made relative to each)."""
    import re

    for path in QUOTING:
        text = path.read_text()
        link = "results.md" if path.parent == DOC.parent else "docs/results.md"

        def block(m: re.Match, link: str = link) -> str:
            suite = m.group(1)
            if suite not in store:
                return m.group(0)
            body = "\n".join(quote(suite, store[suite]))
            body = body.replace("(results.md)", f"({link})")
            return f"<!-- results:{suite} -->\n{body}\n<!-- /results -->"

        new = re.sub(r"<!-- results:(\w+) -->.*?<!-- /results -->", block, text, flags=re.S)
        if new != text:
            path.write_text(new)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", choices=sorted(SUITES))
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--only", default="",
                        help="comma-separated ALGO or ALGO@ENV: run only the suite's rows of "
                             "these, keep the rest (a rerun after a change that can move only "
                             "their results, or a suite produced a few rows at a time)")
    parser.add_argument("--keep-runs", type=Path, metavar="DIR",
                        help="keep each row's run directory (metrics.jsonl with the losses, "
                             "KL and entropy, TensorBoard events, parameters) under DIR "
                             "instead of a temporary one, to study a row afterwards")
    parser.add_argument("--list", action="store_true", help="print the suites and exit")
    parser.add_argument("--render", action="store_true",
                        help="rewrite docs/results.md and the quoting documents from "
                             "docs/results.json without running anything")
    args = parser.parse_args()
    if args.render:
        store = json.loads(STORE.read_text())
        write_doc(store)
        write_quotes(store)
        return
    if args.list or args.suite is None:
        for name, tasks in SUITES.items():
            print(name + ": " + ", ".join(f"{t.algo} {t.env}" for t in tasks))
        return
    store = json.loads(STORE.read_text()) if STORE.is_file() else {}
    only = {a for a in args.only.split(",") if a}
    tasks = [t for t in SUITES[args.suite] if not only or t.algo in only
             or f"{t.algo}@{t.env}" in only]
    if only and not tasks:
        parser.error(f"--only {args.only}: no row of suite '{args.suite}' matches; its rows: "
                     + ", ".join(f"{t.algo}@{t.env}" for t in SUITES[args.suite]))
    if only and args.suite in store and store[args.suite]["meta"]["seeds"] != args.seeds:
        parser.error(f"--only adds to suite '{args.suite}', reported with --seeds "
                     f"{store[args.suite]['meta']['seeds']}: use the same --seeds")
    if args.keep_runs and args.keep_runs.exists() and not args.keep_runs.is_dir():
        parser.error(f"--keep-runs {args.keep_runs}: a file is there; name a directory")
    rev, t0 = commit(), time.perf_counter()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="rl-results-") as tmp:
        logdir = args.keep_runs or tmp
        for task in tasks:
            print(f"{task.algo} on {task.env} ...", file=sys.stderr, flush=True)
            try:
                row = run_task(task, args.seeds, Path(logdir), kept=args.keep_runs is not None)
            except (RunStopped, KeyboardInterrupt, Terminated, UserError) as stop:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # `uv run`'s copy of a Ctrl-C
                if rows:  # the rows finished before it are reported
                    save(store, args.suite, args.seeds, rows, rev, None)
                print(stopped_line(task, stop, args.keep_runs, rows), file=sys.stderr)
                sys.exit(getattr(stop, "exit_code", None) or {
                    KeyboardInterrupt: 130, Terminated: 143}.get(type(stop), 2))
            run_dir = row.pop("run_dir")
            if args.keep_runs:
                print(f"  kept {run_dir}", file=sys.stderr, flush=True)
            dp = _digits(row["greedy"])
            print(f"  greedy IQM {_stat(row['greedy'], dp)}, "
                  f"worst {_num(row['greedy']['min'], dp)}; {row['wall_seconds']:.0f} s",
                  file=sys.stderr, flush=True)
            rows.append(row)
    save(store, args.suite, args.seeds, rows, rev,
         None if only else time.perf_counter() - t0)


def stopped_line(task: Task, stop: BaseException, keep_runs: Path | None,
                 done: list[dict[str, Any]]) -> str:
    """The one line a suite stopped at `task` ends with: the stop or the error, what becomes of
    the row, and the rows it reported before."""
    what = {KeyboardInterrupt: "stopped by SIGINT", Terminated: "stopped by SIGTERM"}.get(
        type(stop)) or str(stop)
    if keep_runs and isinstance(stop, RunStopped):
        what += "; asking for the row again with the same --keep-runs continues it"
    elif keep_runs and isinstance(stop, UserError):
        what += (f"; to start the row afresh, move its run out of {keep_runs} (the newest "
                 f"{task.algo}-... directory there without a summary.json)")
    reported = f" ({len(done)} row(s) before it reported)" if done else ""
    return f"{task.algo} on {task.env}: {what}{reported}"


def _stamped(row: dict[str, Any], rev: str, today: str) -> dict[str, Any]:
    """A row with the commit and date it was reported at, and the commit its run started at
    where that was another (a row continued over sessions)."""
    row = {**row, "commit": rev, "date": today}
    if row.get("started_commit") in (None, rev):
        row.pop("started_commit", None)
    return row


def save(store: dict[str, Any], suite: str, seeds: int, rows: list[dict[str, Any]], rev: str,
         suite_seconds: float | None) -> None:
    """Writes `rows` into the store (docs/results.json), the document and its quotes: in place
    of the suite's rows of the same algorithm and task (`--only`, or a suite stopped part-way),
    each stamped with its commit and date; or, with `suite_seconds`, as the suite's whole
    report."""
    today = time.strftime("%Y-%m-%d")
    if suite_seconds is None:
        fresh = {(r["algo"], r["env"]): _stamped(r, rev, today) for r in rows}
        report = store.setdefault(suite, {"meta": {
            "commit": rev, "seeds": seeds, "date": today, "wall_seconds": 0.0}, "rows": []})
        report["rows"] = [fresh.pop((r["algo"], r["env"]), r) for r in report["rows"]]
        report["rows"] += list(fresh.values())
        # The suite's compute: every row's, whenever it ran.
        report["meta"]["wall_seconds"] = sum(r["wall_seconds"] for r in report["rows"])
        order = [(t.algo, t.env) for t in SUITES[suite]]
        report["rows"].sort(key=lambda r: order.index((r["algo"], r["env"]))
                            if (r["algo"], r["env"]) in order else len(order))
    else:
        rows = [{k: v for k, v in _stamped(r, rev, today).items() if k not in ("commit", "date")}
                for r in rows]  # the suite's meta says both
        store[suite] = {"meta": {"commit": rev, "seeds": seeds, "date": today,
                                 "wall_seconds": suite_seconds}, "rows": rows}
    STORE.write_text(json.dumps(store, indent=1))
    write_doc(store)
    write_quotes(store)
    print(f"wrote {DOC} and {STORE}, and the quotes in "
          f"{', '.join(str(p.relative_to(REPO)) for p in QUOTING)}", file=sys.stderr)


if __name__ == "__main__":
    main()
