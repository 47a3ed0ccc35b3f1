"""Does a learning gate catch a broken building block? Runs one gate of
`tests/gates/test_learning_gates.py` (its own test function: the same request, budget, seeds and
threshold) with one deliberate fault patched into the shared blocks for this process only, and
reports whether the gate fails, as it must for every fault but `none`.

    uv run python tools/gate_mutants.py --gate pqn-breakout-minatar \
        --mutant none --mutant conv-first-plane --mutant argmax-lowest

Faults (each a plausible slip in one line of a shared block):

- `none`: nothing patched; the gate must pass.
- `conv-first-plane`: the 3x3 convolution of the Q-network's torso (`conv3x3` as
  `rl_algos.common.qnetwork` calls it) sees only the observation's first plane, the others
  zeroed (an indexing slip over the channel axis). On Breakout-MinAtar that plane is the paddle:
  the ball, its trail and the bricks are gone.
- `argmax-lowest`: the masked argmax of `rl_algos.common.qvalues` (greedy and ε-greedy acting)
  returns the legal action of lowest Q (a flipped comparison).

Each fault changes the traced program, so nothing stale comes from the compilation cache. Prints
one line per fault: the gate's verdict and the per-seed values it judged."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import jax.numpy as jnp
import numpy as np

GATES_FILE = Path(__file__).resolve().parents[1] / "tests" / "gates" / "test_learning_gates.py"


def meets(measured: dict, every_seed: str) -> bool:
    """The gate's own rule on the values it logged (`_check`'s record): every seed at or above
    the threshold, or the lower end of the mean's 95% interval."""
    values = np.array(measured["per_seed"], dtype=float)
    if measured["rule"] == every_seed:
        return bool(np.all(values >= measured["threshold"]))
    return bool(np.isfinite(measured["mean"])
                and measured["mean"] - measured["ci95"] >= measured["threshold"])


def _first_plane(conv3x3: Callable) -> Callable:
    """`conv3x3(x [H, W, C], kernel, bias) -> [H, W, O]` that sees only the first plane of x."""
    def broken(x, kernel, bias):
        return conv3x3(x.at[..., 1:].set(0.0), kernel, bias)
    return broken


def _lowest(q, mask):
    """`masked_argmax` flipped: the legal action of lowest Q, `q [N, A] -> [N]`."""
    return jnp.argmin(q if mask is None else jnp.where(mask, q, 1e30), axis=-1)


@contextlib.contextmanager
def mutant(name: str) -> Iterator[None]:
    """Patch the named fault into the shared blocks for the duration of the block."""
    from rl_algos.common import qnetwork, qvalues

    patches = {
        "none": [],
        "conv-first-plane": [(qnetwork, "conv3x3", _first_plane(qnetwork.conv3x3))],
        "argmax-lowest": [(qvalues, "masked_argmax", _lowest)],
    }[name]
    saved = [(module, attr, getattr(module, attr)) for module, attr, _ in patches]
    try:
        for module, attr, value in patches:
            setattr(module, attr, value)
        yield
    finally:
        for module, attr, value in saved:
            setattr(module, attr, value)


MUTANTS = ("none", "conv-first-plane", "argmax-lowest")


def load_gates():
    spec = importlib.util.spec_from_file_location("learning_gates", GATES_FILE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while defined
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gate", required=True, help="a gate name of test_learning_gates.GATES")
    parser.add_argument("--mutant", action="append", choices=MUTANTS, required=True)
    args = parser.parse_args()
    gates = load_gates()
    by_name = {gate.name: gate for gate in gates.GATES}
    if args.gate not in by_name:
        sys.exit(f"gate_mutants: no gate named {args.gate!r}; known: {', '.join(by_name)}")
    gate = by_name[args.gate]
    logged = os.environ.get("RL_GATES_LOG")
    for name in args.mutant:
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp, mutant(name):
            log = Path(tmp) / "gates.jsonl"
            os.environ["RL_GATES_LOG"] = str(log)  # the gate's own record of what it measured
            try:
                gates.test_learning_gate(gate, Path(tmp))
            except AssertionError:
                pass  # judged below from what the gate measured, so that a failure of another
                # of its assertions (the budget, the shape) is not mistaken for a caught fault
            if not log.is_file():
                sys.exit(f"gate_mutants: {gate.name} recorded no measurement with fault "
                         f"{name!r}; run its test with pytest to see why")
            measured = json.loads(log.read_text().splitlines()[-1])
            verdict = "passes" if meets(measured, gates.EVERY_SEED) else "FAILS"
        print(f"{gate.name} with fault {name!r}: {verdict}; {measured['metric']} per seed "
              f"{[round(v, 2) for v in measured['per_seed']]}, required {measured['rule']} >= "
              f"{measured['threshold']} ({time.perf_counter() - started:.0f} s)", flush=True)
    if logged is None:
        os.environ.pop("RL_GATES_LOG", None)
    else:
        os.environ["RL_GATES_LOG"] = logged


if __name__ == "__main__":
    main()
