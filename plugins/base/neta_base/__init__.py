"""The ``base`` toolset: shell, files and the patch tool."""
