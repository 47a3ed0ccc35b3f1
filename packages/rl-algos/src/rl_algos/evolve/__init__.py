"""Meta-evolution of PPO's components (`rl evolve`): an evosax strategy in the outer loop, whole
PPO training runs of a population of meta-parameters in the inner loop, in one compiled program.

Needs the `evolve` extra (evosax 0.3): `pip install 'jaxrlkit-algos[evolve]'`."""

from rl_algos.evolve.es import (
    STRATEGIES,
    GenerationResult,
    Strategy,
    generation_keys,
    initial_state,
    inner_keys,
    make_strategy,
    run_generation,
)
from rl_algos.evolve.fitness import combine_fitness, make_baseline, make_evaluate
from rl_algos.evolve.targets import (
    TARGETS,
    MetaTarget,
    ValueLossHParams,
    get_target,
    learned_value_loss,
)

__all__ = ["STRATEGIES", "TARGETS", "GenerationResult", "MetaTarget", "Strategy",
           "ValueLossHParams", "combine_fitness",
           "generation_keys", "get_target", "initial_state", "inner_keys", "learned_value_loss",
           "make_baseline", "make_evaluate", "make_strategy", "run_generation"]
