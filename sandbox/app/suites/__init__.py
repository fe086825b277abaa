"""Orchestration: running many episodes (an STSS suite, a single-room benchmark) with resume.

This package is part of the composition root (with `sandbox.app.cli` and `sandbox.app.commands`): it
wires tasks, agents and evaluation together, so only the commands and the benchmarks in bench/
import it. Nothing below it (the kernel, worlds, agents, tasks, evaluation) may.
"""
