"""One module per `sandbox` subcommand; see sandbox/app/cli.py."""
