"""``python -m neta`` runs the command line.

Python puts the current directory first on ``sys.path`` for ``-m``: ``*.dist-info`` folders
there would be found as installed plugins (entry points), so it is taken off before the
command line loads any. Python has imported this package (and what its ``__init__`` imports)
before this runs, from the current directory too if something there has the name: in a
directory one does not trust, the ``neta`` command (or ``python -P -m neta``) is the way.
"""

import os
import sys

_here = os.getcwd()
sys.path[:] = [entry for entry in sys.path if entry not in ("", ".", _here)]

from neta.cli.app import main  # noqa: E402  (after sys.path is cleaned)

main()
