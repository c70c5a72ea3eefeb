"""The ``skill`` toolset: reusable instructions kept as SKILL.md folders."""
