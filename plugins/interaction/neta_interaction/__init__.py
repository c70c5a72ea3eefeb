"""The ``interaction`` toolset: asking the user a question."""
