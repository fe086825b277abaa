"""Agents: generative agents built from swappable modules, and the chat agents of the
single-room benchmarks. See agents/README.md."""
