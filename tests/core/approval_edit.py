"""The edit the approval tests ask about: a ``patch`` of ``app.py``, before and after."""

BEFORE = "def greet():\n    return 'hi'\n"
AFTER = "def greet():\n    return 'hello'\n"
PATCH = {
    "tool_calls": [
        {
            "name": "patch",
            "arguments": {
                "path": "app.py",
                "old_string": "return 'hi'",
                "new_string": "return 'hello'",
            },
        }
    ]
}
"""A model turn that calls ``patch`` on ``app.py``: ``BEFORE`` becomes ``AFTER``."""
