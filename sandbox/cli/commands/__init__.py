"""CLI subcommands: every module here has ``register(subparsers)`` and is found automatically."""
