"""One module per `sandbox` subcommand; see sandbox/cli.py."""
