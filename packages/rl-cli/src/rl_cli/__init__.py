"""rl_cli: the `rl` command, the composition root of the framework (the only package that
imports both the environment adapters and the algorithms)."""
