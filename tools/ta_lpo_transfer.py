"""Evolved drifts on tasks they were not evolved on: PPO, LPO and temporally-aware LPO (TA-LPO)
trained by `rl run` at equal budgets and settings on the same seeds, one table.

Each row is one `rl run` of `--seeds` vmapped agents (seeds 1000.. by default: none of them is an
inner seed of the evolution), exactly the command a user types, e.g.

    uv run rl run --algo lpo --meta-params docs/evolve/ta_lpo_cartpole_mean.npz \\
        --env gymnax/Acrobot-v1 --num-seeds 8 --seed 1000 --total-timesteps 3e4 --set lr=2.5e-3

and the table reads its summary.json: the final return (the mean return of the training
episodes that ended in the last 5% of updates) and the greedy evaluation, each as the mean over
seeds with its 95% interval (Student t, `rl run`'s own), the number of seeds with a final return
(a seed none of whose episodes ended in that window has none), and the worst seed.

    uv run python tools/ta_lpo_transfer.py --lpo DRIFT.npz --ta-lpo TA_DRIFT.npz \\
        [--seeds 8] [--out docs/evolve/ta_lpo/transfer.md]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

# (task label, rl run arguments): unseen environments at the evolution's budget and inner learning
# rate, and at PPO's own presets (17 to 34 times the horizon, other learning rates), where only
# the relative training progress n/N carries over.
TASKS: list[tuple[str, list[str]]] = [
    ("Acrobot-v1, 3e4 steps, lr 2.5e-3",
     ["--env", "gymnax/Acrobot-v1", "--total-timesteps", "3e4", "--set", "lr=2.5e-3"]),
    ("Catch-bsuite, 3e4 steps, lr 2.5e-3",
     ["--env", "gymnax/Catch-bsuite", "--total-timesteps", "3e4", "--set", "lr=2.5e-3"]),
    ("Acrobot-v1, preset (5e5 steps, lr 2.5e-4)", ["--env", "gymnax/Acrobot-v1"]),
    ("CartPole-v1, preset (5e5 steps, lr 2.5e-4)", ["--env", "gymnax/CartPole-v1"]),
    # Continuous actions (a Gaussian policy's ratio): PPO's continuous_control preset.
    ("Pendulum-v1, preset (1e6 steps, lr 1e-3)", ["--env", "gymnax/Pendulum-v1"]),
]


def run(algo_args: list[str], task_args: list[str], seeds: int, first: int,
        logdir: Path, name: str) -> dict:
    cmd = ["uv", "run", "rl", "run", *algo_args, *task_args, "--num-seeds", str(seeds),
           "--seed", str(first), "--logdir", str(logdir), "--run-name", name, "--no-progress"]
    print("$", " ".join(cmd[2:]), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr[-3000:]}")
    return json.loads((logdir / name / "summary.json").read_text())


def cell(mean: float | None, ci: float | None) -> str:
    return "n/a" if mean is None else f"{mean:.1f} ± {ci or 0.0:.1f}"


def table(results: list[dict], seeds: int) -> str:
    """The markdown table of `results` (one dict per run, as written to the JSON file)."""
    lines = [f"| task | algorithm | final return | seeds with a return (of {seeds}) | worst seed "
             "| greedy evaluation | train s |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        finals = [v for v in r["final_return_per_member"] if v is not None]
        worst = f"{min(finals):.1f}" if finals else "n/a"
        lines.append(f"| {r['task']} | {r['algo']} | "
                     f"{cell(r['final_return_mean'], r['final_return_ci95'])} | {len(finals)} | "
                     f"{worst} | {cell(r['greedy_eval_mean'], r['greedy_eval_ci95'])} | "
                     f"{r['run_seconds']:.0f} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lpo", type=Path, help="an `rl evolve --meta drift` file")
    ap.add_argument("--ta-lpo", type=Path, help="an `rl evolve --meta ta_lpo` file")
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--first-seed", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=None,
                    help="write the table here (markdown) and the runs' figures beside it (.json)")
    ap.add_argument("--table-from", type=Path, default=None,
                    help="only print the table of a .json this script wrote")
    args = ap.parse_args()
    if args.table_from is not None:
        print(table(json.loads(args.table_from.read_text()), args.seeds), end="")
        return
    if args.lpo is None or args.ta_lpo is None:
        ap.error("--lpo and --ta-lpo are required (or --table-from)")
    algos = [("PPO", ["--algo", "ppo"]),
             ("LPO", ["--algo", "lpo", "--meta-params", str(args.lpo)]),
             ("TA-LPO", ["--algo", "lpo", "--meta-params", str(args.ta_lpo)])]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for t, (label, task_args) in enumerate(TASKS):
            for a, (algo, algo_args) in enumerate(algos):
                s = run(algo_args, task_args, args.seeds, args.first_seed, Path(tmp),
                        f"t{t}a{a}")
                results.append({"task": label, "algo": algo, **{
                    k: s.get(k) for k in ("final_return_per_member", "final_return_mean",
                                          "final_return_ci95", "greedy_eval_mean",
                                          "greedy_eval_ci95", "run_seconds")}})
                print(table(results[-1:], args.seeds).splitlines()[-1], flush=True)
    out = table(results, args.seeds)
    print(out)
    if args.out is not None:
        args.out.write_text(out)
        args.out.with_suffix(".json").write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
