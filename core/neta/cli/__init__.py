"""The ``neta`` command line (typer): one module per command group."""
