"""The suite's own speed: a pytest plugin (``plugin.py``) and its parts; see README.md."""
