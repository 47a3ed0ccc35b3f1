"""JaxMARL behind the multi-agent port (Rutherford et al., 2023; `jaxmarl` 0.2): the Multi-Agent
Particle Environments with discrete actions, SMAX against its heuristic enemy, Overcooked,
Hanabi, Switch Riddle, Coin Game and STORM (see `rl_core.multiagent` for the port).

    env = rl_envs.make("jaxmarl/MPE_simple_spread_v3")   # env.num_agents == 3
    env = rl_envs.make("jaxmarl/SMAX_2s3z")              # 5 allies against 5 scripted enemies

Each leaf carries the agent axis in JaxMARL's `env.agents` order. How JaxMARL's steps map onto
the port:
* the environment is stepped with `step_env` (no auto-reset); rl-core's `AutoReset` resets when
  every agent is done, keeping the true final observation;
* MPE episodes end only on the step limit (JaxMARL's `max_steps`, 25: an episode has 26 steps),
  so every `done` is `truncated` (a learner bootstraps from it); `terminated` stays False;
* agents whose observations are shorter than the longest (the adversary of simple_adversary,
  the speaker of simple_speaker_listener) get theirs zero-padded at the end, and agents with
  fewer actions than the most get the extra actions masked: `info["action_mask"]` `[A, n]`
  marks each agent's own actions (a task whose agents all have every action has no mask: there
  is nothing to mask); `env.obs_sizes` and `env.action_counts` give each agent's real sizes;
* rewards are JaxMARL's per agent, `[A]` (a team's return is their sum).

SMAX (`SMAX_<scenario>`: JaxMARL's `HeuristicEnemySMAX` with its defaults, which are those of its
baselines' configs: the enemy attacks the closest unit, units see the enemies' last actions,
walls kill) keeps the learner's team, the allies, as the agents:
* a unit that dies is `terminated` from that step on (it stays in the batch, its only legal
  action the no-op); when the battle is decided (a side wiped out) every other ally is
  `terminated` too; at JaxMARL's step limit (`max_steps`, 100: at most 101 steps a battle,
  the limit checked before the step counts) the allies still alive are
  `truncated` (bootstrapped);
* `info["action_mask"]` is JaxMARL's `get_avail_actions` (move, stop, attack an enemy in range),
  `info["alive"]` which allies are alive, `info["global_state"]` JaxMARL's `world_state` (every
  unit's features, the same for each agent) for a centralised critic, and `info["won"]` (bool,
  every agent) marks the step on which the allies won: the enemies are all dead and an ally is
  alive; the win rate is the fraction of episodes ending on such a step;
* each ally's reward is the team's (JaxMARL's: each enemy's lost fraction of its own health,
  averaged over the enemies, plus 1 for the win), so the team return sums `A` copies of it:
  at most `2 * A` in a won battle.

Overcooked (`Overcooked_<layout>`, JaxMARL's `overcooked` on one of its five layouts): two cooks
in a kitchen, each observing the grid as `[H, W, 26]` feature planes, flattened:
* both agents are handed the team's reward, 20 for each soup delivered; an episode ends only on
  the step limit (`max_steps`, 400), so every `done` is `truncated`;
* `info["shaped_reward"]` `[A]` is JaxMARL's shaping, each cook's own (3 for an onion put in
  the pot or a dish picked up, 5 for a soup picked up): the reward its baselines add while they
  anneal it away (`rl_core.AnnealedRewardShaping`), never part of the reported return.

Hanabi (`hanabi`, JaxMARL's two-player game by default; `num_agents=` up to 5), turn-based:
* every agent acts each step, but only the current player's move counts: `info["action_mask"]`
  is JaxMARL's `get_legal_moves` (the current player's legal plays, discards and hints; for every
  other player only the no-op, the last action);
* the reward is the team's (the change in score, each agent a copy; losing the last life takes
  back every firework played); the game ends by its own rules (a full round after the last card
  is drawn, the last life lost, or every firework complete), so every `done` is `terminated`;
  there is no step limit.

Switch Riddle (`switch_riddle`, Foerster et al., 2016; 3 prisoners by default, `num_agents=`):
* each step one random prisoner is in the room, sees the bulb and may switch it or tell; the
  others' actions are ignored. Telling ends the episode as `terminated` for every agent (+1 to
  each if every prisoner has been in the room, -1 otherwise); JaxMARL's step limit
  (`4 * num_agents - 6` steps) ends it as `truncated`.

Coin Game (`coin_game`, Lerer and Peysakhovich, 2017, as LOLA's Foerster et al., 2018 play it):
two agents, general-sum, on a 3x3 torus; an episode is `num_outer_steps` (10) inner games of
`num_inner_steps` (10) steps each, ended only by that limit (`truncated`); `info
["inner_episode_done"]` `[A]` marks an inner game's last step, which JaxMARL pays 0 and whose
observation is already the next game's start.

STORM (`storm_np`, Khan et al., 2023: JaxMARL's n-player InTheMatrix; 2 agents by default,
`num_agents=`): agents collect red and blue coins on an 8x8 grid and play the matrix game their
inventories make when they meet (the prisoner's dilemma by default), each observing a 5x5 view
of 14 planes, flattened; 8 actions. An episode is `num_inner_steps` (152) steps, ended only by
that limit (`truncated`); JaxMARL restarts the grid itself on that step, so its observation is
already the next episode's start. Rewards are each agent's own (general-sum). JaxMARL's other
STORM ids (`storm`, `storm_2p`) hand back observations, rewards and flags in shapes of their
own and are not listed.

Not here yet: MABrax and the MPE tasks with continuous actions (simple_world_comm,
simple_facmac). `rl render` draws MPE, SMAX and Overcooked; the others have no renderer.
"""

from __future__ import annotations

from typing import Any

from rl_envs.jaxmarl_envs import JaxMARLEnv, MPEEnv, OvercookedEnv, SMAXEnv, make_jaxmarl
from rl_envs.jaxmarl_games import CoinGameEnv, HanabiEnv, StormEnv, SwitchRiddleEnv

LIBRARY = "jaxmarl"

ENV_NAMES: list[str] = [
    "MPE_simple_v3", "MPE_simple_spread_v3", "MPE_simple_speaker_listener_v4",
    "MPE_simple_adversary_v3", "MPE_simple_tag_v3", "MPE_simple_push_v3",
    "MPE_simple_crypto_v3", "MPE_simple_reference_v3",
]
# JaxMARL's scenarios with a fixed line-up (`smax_env.MAP_NAME_TO_SCENARIO`, less SMACv2's
# random ones).
SMAX_SCENARIOS: tuple[str, ...] = ("3m", "2s3z", "25m", "3s5z", "8m", "5m_vs_6m", "10m_vs_11m",
                                   "27m_vs_30m", "3s5z_vs_3s6z", "3s_vs_5z", "6h_vs_8z")
# JaxMARL's `overcooked_layouts`, the five of Carroll et al.'s (2019) Overcooked-AI.
OVERCOOKED_LAYOUTS: tuple[str, ...] = ("cramped_room", "asymm_advantages", "coord_ring",
                                       "forced_coord", "counter_circuit")
# JaxMARL's own ids, each its own family.
GAMES: tuple[str, ...] = ("hanabi", "switch_riddle", "coin_game", "storm_np")
MPE_NAMES = list(ENV_NAMES)
ENV_NAMES += [f"SMAX_{s}" for s in SMAX_SCENARIOS]
ENV_NAMES += [f"Overcooked_{s}" for s in OVERCOOKED_LAYOUTS]
ENV_NAMES += list(GAMES)
FAMILY: dict[str, str] = {n: "mpe" for n in MPE_NAMES} | {
    f"SMAX_{s}": "smax" for s in SMAX_SCENARIOS} | {
    f"Overcooked_{s}": "overcooked" for s in OVERCOOKED_LAYOUTS} | {
    g: "storm" if g == "storm_np" else g for g in GAMES}


def agent_count(name: str) -> int:
    """The number of agents of task `name` with its default arguments (`rl envs` lists it)."""
    return len(make_jaxmarl(name, FAMILY[name]).agents)


def make(name: str, **kwargs: Any) -> JaxMARLEnv:
    cls = {"mpe": MPEEnv, "smax": SMAXEnv, "overcooked": OvercookedEnv, "hanabi": HanabiEnv,
           "switch_riddle": SwitchRiddleEnv, "coin_game": CoinGameEnv,
           "storm": StormEnv}[FAMILY[name]]
    return cls(name, FAMILY[name], **kwargs)
