"""Meta-parameter files: what `rl evolve` writes and `rl run --algo lpo --meta-params` reads.

A `.npz` holding the meta-network (`w1 [F, H]`, `b1 [H]`, `w2 [H]`, see
`rl_algos.common.meta.MetaMLP`) and what it is for (`target`: 'drift', 'ta_lpo' or
'value_loss'), plus
where it came from (`generation`, `fitness`). Written atomically (a temporary file renamed into
place), so a run stopped at any moment leaves either the previous file or the new one."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from rl_cli.errors import UserError

# Input features of each target's meta-network (rl_algos.lpo.DRIFT_FEATURES, TA_DRIFT_FEATURES
# and rl_algos.evolve.targets.VALUE_LOSS_FEATURES; kept here so reading a file needs no evosax).
NUM_FEATURES = {"drift": 8, "ta_lpo": 9, "value_loss": 4}
# The files an algorithm's meta field takes, by the spec's `meta_target`: LPO's drift field
# takes a plain drift and a temporally-aware one (which reads the training progress).
ACCEPTED = {"drift": ("drift", "ta_lpo")}


def save_npz(path: Path, **arrays: Any) -> None:
    """`np.savez` to `path` atomically."""
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)


def save_meta_params(path: Path, target: str, params: Any, generation: int,
                     fitness: float) -> None:
    save_npz(path, target=np.asarray(target), w1=np.asarray(params.w1, np.float32),
             b1=np.asarray(params.b1, np.float32), w2=np.asarray(params.w2, np.float32),
             generation=np.asarray(generation), fitness=np.asarray(fitness, np.float32))


def load_meta_params(path: Path, target: str) -> Any:
    """The `MetaMLP` stored in `path`, checked against `target`; every problem is a UserError that
    says what the file should be."""
    from rl_algos.common.meta import MetaMLP

    hint = f"pass a file written by `rl evolve --meta {target}` (mean_meta_params.npz or " \
           f"best_meta_params.npz in its run directory)"
    path = Path(path)
    if not path.is_file():
        raise UserError(f"--meta-params {path}: no such file; {hint}")
    try:
        with np.load(path, allow_pickle=False) as f:
            data = {k: f[k] for k in f.files}
    except (OSError, ValueError) as e:
        raise UserError(f"--meta-params {path}: not a readable .npz file ({e}); {hint}") from None
    missing = [k for k in ("target", "w1", "b1", "w2") if k not in data]
    if missing:
        raise UserError(f"--meta-params {path}: missing {', '.join(missing)}; {hint}")
    found = str(data["target"])
    accepted = ACCEPTED.get(target, (target,))
    if found not in accepted:
        raise UserError(f"--meta-params {path} holds a '{found}' network, this algorithm needs "
                        f"a {' or '.join(repr(a) for a in accepted)} one; {hint}")
    w1, b1, w2 = data["w1"], data["b1"], data["w2"]
    f_in = NUM_FEATURES[found]
    if w1.ndim != 2 or w1.shape[0] != f_in or b1.shape != (w1.shape[1],) or \
            w2.shape != (w1.shape[1],):
        raise UserError(f"--meta-params {path}: wrong shapes w1{list(w1.shape)} b1"
                        f"{list(b1.shape)} w2{list(w2.shape)}; a {found} network has w1 "
                        f"[{f_in}, H], b1 [H], w2 [H]; {hint}")
    if not all(np.all(np.isfinite(a)) for a in (w1, b1, w2)):
        raise UserError(f"--meta-params {path}: the parameters contain NaN or inf; {hint}")
    import jax.numpy as jnp

    return MetaMLP(*(jnp.asarray(a, jnp.float32) for a in (w1, b1, w2)))
