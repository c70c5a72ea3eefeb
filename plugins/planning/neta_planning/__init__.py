"""The ``planning`` toolset: the todo list."""
