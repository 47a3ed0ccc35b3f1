"""What a run does with its agents besides training them: the final agents out of the carry
and their file, greedy evaluations during training (`--eval-every`) and after it, and the
work prepared on a thread while the compiled program trains."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from rl_cli.request import RunRequest
from rl_cli.stats import GAME_OUTCOMES, game_outcome_rates, mean_ci95


def final_agents(algo: Any, carry: Any) -> Any:
    """The agent of every member (`Algorithm.agent` of each member's final carry: parameters and,
    when training normalised observations, their statistics; leading `[M]` axis)."""
    import jax

    return jax.vmap(algo.agent)(carry)


def save_agents(path: Path, agents: Any) -> None:
    """Every member's agent (`final_agents`) in Equinox's leaf serialisation:
    `eqx.tree_deserialise_leaves(path, like)` loads it into the member-stacked
    `make_policy(env, config).agent_like` (`rl_cli.evaluate.load_agent` does)."""
    import equinox as eqx

    eqx.tree_serialise_leaves(path, agents)


class PeriodicEval:
    """`--eval-every`: at those chunk boundaries the agents play `--eval-episodes` greedy episodes
    on a separate copy of the environment (the program compiled once, at the first one); the
    mean per member goes to TensorBoard (`eval/greedy_return/...`) and to metrics.jsonl. The
    training's own random stream is untouched, so evaluating does not change the run."""

    def __init__(self, env: Any, algo: Any, req: RunRequest, logger: Any):
        self.env, self.algo, self.req, self.logger = env, algo, req, logger
        self.play: Any = None

    def __call__(self, state: Any) -> None:
        import jax

        from rl_cli.play import compile_play

        agents = jax.vmap(self.algo.agent)(state.carry)
        if self.play is None:
            self.play = compile_play(self.env, self.algo.policy, agents,
                                     max(1, self.req.eval_episodes), self.req.seed)
        played = self.play(agents)
        per_member = np.array([mean_ci95(r)[0] for r in played.returns])
        if self.logger is not None:
            self.logger.log_eval(state.updates_done, per_member)


def final_evaluation(env: Any, policy: Any, agents: Any, episodes: int,
                     seed: int, compiled: Any = None) -> dict[str, Any]:
    """The final agents' greedy evaluation for summary.json: `episodes` whole episodes per
    member on a fresh copy of the training environment, acting through the algorithm's policy
    (what `rl eval` does with the saved agents), beside the training return of the exploring
    behaviour policy."""
    from rl_cli.play import play_episodes

    played = play_episodes(env, policy, agents, episodes, seed, compiled=compiled)
    per_member = [mean_ci95(r)[0] for r in played.returns]
    mean, ci = mean_ci95(np.array(per_member))
    return {
        "greedy_eval_return_per_member": [float(r) if np.isfinite(r) else None
                                          for r in per_member],
        "greedy_eval_mean": float(mean) if np.isfinite(mean) else None,
        "greedy_eval_ci95": float(ci) if np.isfinite(ci) else None,
        "greedy_eval_episodes": episodes,
        "greedy_eval_seconds": played.compile_seconds + played.run_seconds,
        # An environment that flags a won episode (SMAX's battles) has its win rate from the
        # flag; a two-player game without one from the return's sign.
        **(game_outcomes(env, played.returns) if played.won is None else
           {outcome_key("win_rate"): [float(w) for w in played.won.mean(axis=1)]}),
    }


def game_outcomes(env: Any, returns: np.ndarray) -> dict[str, list[float]]:
    """On a two-player game against a built-in opponent (pgx: `env.num_players` 2, the return's
    sign the outcome), each member's share of the greedy episodes won, drawn and lost, so that
    a claim such as "never loses" can be read off summary.json; {} for any other environment."""
    if getattr(env, "num_players", 1) < 2:
        return {}
    return {outcome_key(k): [float(v) for v in rates]
            for k, rates in game_outcome_rates(returns).items()}


def outcome_key(outcome: str) -> str:
    """summary.json's key for one of `GAME_OUTCOMES` per member ('win_rate' ->
    'greedy_eval_win_rate_per_member')."""
    return f"greedy_eval_{outcome}_per_member"


def summary_outcomes(summary: dict[str, Any]) -> dict[str, list[float]]:
    """The per-member game outcomes a summary holds (`game_outcomes`' rates, or the win rate
    alone of an environment that flags a won episode), keyed by outcome; {} for none."""
    return {k: summary[outcome_key(k)] for k in GAME_OUTCOMES if outcome_key(k) in summary}


class AfterTraining:
    """What follows training, prepared in a background thread while the compiled program trains
    (on CPU its XLA threads leave the host about a core, and the main thread mostly waits for
    chunks): matplotlib imported and its fonts loaded for curves.png (`plots`), and the final
    greedy evaluation's program compiled for agents shaped like the run's (`evaluation`). It
    starts once the training program is compiled (before, it would compete with compiling for
    the interpreter). `join` waits for it; whatever did not get done or failed there is done in
    the main thread afterwards, as without it, with the same results. As a context manager it
    is joined on leaving, also when the run stops early: a thread still inside JAX's C++ code
    when the interpreter shuts down would abort the process."""

    def __init__(self, plots: bool, evaluation: Any = None):
        """`evaluation`: `(env, algo, keys, hparams, episodes, seed)` or None."""
        import threading

        self.plots, self.evaluation = plots, evaluation
        self.play: Any = None  # `compile_play`'s result for the final agents
        self._thread = threading.Thread(target=self._run, name="rl-after-training")

    def __enter__(self) -> AfterTraining:
        return self

    def __exit__(self, *exc: object) -> None:
        self.join()

    def start(self) -> None:
        if self.plots or self.evaluation is not None:
            self._thread.start()

    def join(self) -> None:
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        try:
            if self.plots:
                from rl_cli.plots import warm_up

                warm_up()
            if self.evaluation is not None:
                import jax

                from rl_cli.play import compile_play

                env, algo, keys, hparams, episodes, seed = self.evaluation
                carry = jax.eval_shape(jax.vmap(algo.init), keys, hparams)
                agents = jax.eval_shape(lambda c: final_agents(algo, c), carry)
                self.play = compile_play(env, algo.policy, agents, episodes, seed)
        except Exception:  # noqa: BLE001 - done again in the main thread, where errors show
            pass
