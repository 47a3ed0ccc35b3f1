"""Discovered Policy Optimisation (Lu, Kuba, Letcher, Metz, Schroeder de Witt and Foerster,
NeurIPS 2022, "Discovered Policy Optimisation"): PPO's training loop with the clipped surrogate
replaced by the drift function found by meta-learning (the "DPO" closed form of the paper's
Section 5 and its reference implementation).

Only the objective differs from PPO: `make_algorithm` is PPO's with `objective=dpo_objective`."""

from rl_algos.dpo.config import PRESETS, DPOConfig, DPOHParams
from rl_algos.dpo.losses import dpo_drift, dpo_objective
from rl_algos.dpo.train import make_algorithm, make_train

__all__ = ["PRESETS", "DPOConfig", "DPOHParams", "dpo_drift", "dpo_objective", "make_algorithm",
           "make_train"]
