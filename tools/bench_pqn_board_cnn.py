"""Why PQN's `board_game` preset has no convolution: its run time per update on pgx/connect_four
with the Q-network's 3x3 convolution (`cnn_channels=16`) against the dense layers on the
flattened planes (`cnn_channels=0`, the preset), everything else the preset's. One unbatched seed,
20 updates per run, compile apart, three interleaved repeats; the ratio is of the medians.

    uv run --group bench python tools/bench_pqn_board_cnn.py
"""

from __future__ import annotations

import time

import jax
import numpy as np

UPDATES = 20


def main() -> None:
    import rl_envs
    from rl_algos import get
    from rl_algos.common import hparams_as_arrays
    from rl_algos.pqn import PQNConfig, PQNHParams, make_train

    preset = get("pqn").presets["board_game"]
    env = rl_envs.make("pgx/connect_four", **preset.env)
    hp = hparams_as_arrays(PQNHParams(**preset.hparams))
    steps = preset.config["num_envs"] * preset.config["num_steps"] * UPDATES
    key = jax.random.PRNGKey(0)
    programs = {}
    for channels in (0, 16):
        config = PQNConfig(**{**preset.config, "total_timesteps": steps,
                              "cnn_channels": channels})
        t0 = time.perf_counter()
        programs[channels] = jax.jit(make_train(env, config)).lower(key, hp).compile()
        print(f"cnn_channels={channels:>2}: compile {time.perf_counter() - t0:.1f} s", flush=True)
    runs: dict[int, list[float]] = {c: [] for c in programs}
    for _ in range(3):
        for channels, compiled in programs.items():
            t0 = time.perf_counter()
            jax.block_until_ready(compiled(key, hp))
            runs[channels].append(time.perf_counter() - t0)
    for channels, times in runs.items():
        print(f"cnn_channels={channels:>2}: {np.median(times) / UPDATES * 1e3:.1f} ms per update")
    print(f"convolution / dense: {np.median(runs[16]) / np.median(runs[0]):.2f}x the time")


if __name__ == "__main__":
    main()
