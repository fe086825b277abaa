"""The composition root: the command line (cli.py, commands/) and the orchestration that runs
many episodes (suites/). The only part of sandbox/ that may import every package; the kernel
beside it (llm, engine, log, storage, events, files, ...) imports nothing from above it.
Benchmarks are not named here: each declares itself as a plug-in (entry-point group
`sandbox.benchmarks`) and the commands are made from its declaration.
"""
