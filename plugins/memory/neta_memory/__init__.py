"""The ``memory`` toolset: long-term facts saved and recalled across sessions."""
