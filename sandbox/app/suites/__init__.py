"""Orchestration: running many episodes with resume (a single-room benchmark; the executor and
the resume rule every benchmark's suite shares).

This package is part of the composition root (with `sandbox.app.cli` and `sandbox.app.commands`): it
wires tasks, agents and evaluation together, so only the commands, the benchmarks' plug-ins
(tasks/NAME/plugin) and the benchmarks in bench/ import it. Nothing below it (the kernel,
worlds, agents, tasks, evaluation) may.
"""
