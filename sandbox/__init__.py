"""The engine kernel: LLM layer, simulated clock, run loop, episode log, CLI."""

__version__ = "0.1.0"
