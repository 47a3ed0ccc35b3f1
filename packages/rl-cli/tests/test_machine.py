"""The record of the machine a run was computed on (`rl_cli.machine`): what it names, and when a
resume says that its machine differs from the run's."""

from __future__ import annotations

import jax

from rl_cli.machine import (
    MACHINE_KEYS,
    computing_on,
    machine_change,
    machine_line,
    machine_record,
    processor,
    source_commit,
    started_machine,
)


def test_the_record_names_this_processor_jax_and_devices() -> None:
    record = machine_record()
    assert record["processor"] == processor() and record["processor"].strip()
    assert record["jax_version"] == jax.__version__
    assert len(record["devices"]) == jax.device_count() >= 1
    n = jax.device_count()
    assert machine_line(record) == (f"{processor()}, {n} device{'s' if n > 1 else ''}, "
                                    f"jax {jax.__version__}")
    assert computing_on() == f"on {processor()}, jax {jax.__version__}"


def test_older_records_name_what_they_have() -> None:
    assert machine_line({"jax_version": "0.4.1", "devices": ["a", "b"]}) == (
        "processor not recorded, 2 devices, jax 0.4.1")
    assert machine_line({}) == "processor not recorded"


def test_a_resume_names_a_change_of_processor_or_jax_only() -> None:
    here = machine_record()
    assert machine_change(here) == ""
    assert machine_change({**here, "devices": ["x"] * 7}) == ""  # the arrangement is the request's
    assert machine_change({"jax_version": "0.1"}) == ""  # recorded before processors were
    moved = machine_change({**here, "processor": "Other CPU"})
    assert moved.startswith("started on Other CPU, ") and f"resumed on {processor()}" in moved
    assert "not bitwise" in machine_change({**here, "jax_version": "0.0.1"})


def test_a_resume_keeps_the_starting_machine_or_none() -> None:
    """A record written before processors were recorded gives None for what it lacks, so a
    resume on a new processor does not claim the run started there."""
    old = {"jax_version": "0.4.1", "devices": ["cpu:0"], "command": ["rl"]}
    kept = started_machine(old)
    assert list(kept) == list(MACHINE_KEYS) and kept["processor"] is None
    assert kept["jax_version"] == "0.4.1" and machine_change(kept) == ""
    assert machine_line(kept) == "processor not recorded, 1 device, jax 0.4.1"


def test_the_record_names_the_source_commit_of_a_checkout_only(tmp_path) -> None:
    """Run from this git checkout, the record names its commit; a copy of the module outside
    any checkout (an installed package) names none rather than a neighbour's."""
    import importlib.util
    import re
    import shutil

    from rl_cli import machine

    commit = machine_record()["commit"]
    assert commit == source_commit() and re.fullmatch(r"[0-9a-f]{7,}(\+dirty)?", commit), commit
    copy = tmp_path / "machine_copy.py"
    shutil.copy(machine.__file__, copy)
    spec = importlib.util.spec_from_file_location("machine_copy", copy)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.source_commit() is None
