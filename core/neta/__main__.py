"""``python -m neta`` runs the command line.

Python puts the current directory first on ``sys.path`` for ``-m``: a folder an untrusted
repository controls could then bring its own modules, and ``*.dist-info`` folders there would
be found as installed plugins (entry points). It is taken off before anything is loaded.
"""

import os
import sys

_here = os.getcwd()
sys.path[:] = [entry for entry in sys.path if entry not in ("", ".", _here)]

from neta.cli.app import main  # noqa: E402  (after sys.path is cleaned)

main()
