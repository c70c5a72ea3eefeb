"""The agent runtime: the loop, the system prompt, and the ``Agent`` hosts use."""
