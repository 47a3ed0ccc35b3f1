"""Learned Policy Optimisation (Lu, Kuba, Letcher, Metz, Schroeder de Witt and Foerster, NeurIPS
2022, "Discovered Policy Optimisation"): PPO's training loop with the clipped surrogate replaced
by r·A − f_θ(r, A), where the drift f_θ is a small network whose parameters θ were found by
meta-evolution (`rl evolve --meta drift`) and are passed in as a traced hyperparameter. A drift
evolved with `rl evolve --meta ta_lpo` also reads the training progress (temporally-aware LPO,
Jackson et al., ICLR 2024; see `rl_algos.lpo.drift`).

Only the objective differs from PPO: `make_algorithm` is PPO's with `objective=lpo_objective`."""

from rl_algos.lpo.config import PRESETS, LPOConfig, LPOHParams
from rl_algos.lpo.drift import (
    DRIFT_FEATURES,
    TA_DRIFT_FEATURES,
    drift_features,
    init_drift,
    init_ta_drift,
    is_temporal,
    learned_drift,
    lpo_objective,
    ppo_drift,
)
from rl_algos.lpo.train import make_algorithm, make_train

__all__ = ["DRIFT_FEATURES", "PRESETS", "TA_DRIFT_FEATURES", "LPOConfig", "LPOHParams",
           "drift_features", "init_drift", "init_ta_drift", "is_temporal", "learned_drift",
           "lpo_objective", "make_algorithm", "make_train", "ppo_drift"]
