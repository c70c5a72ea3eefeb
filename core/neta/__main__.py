"""``python -m neta`` runs the command line."""

from neta.cli.app import main

main()
