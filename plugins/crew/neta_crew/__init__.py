"""The ``crew`` toolset: delegating work to sub-agents."""
