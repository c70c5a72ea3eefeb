"""The ``anthropic`` provider: Anthropic's Messages API through the official SDK.

Install it with ``pip install 'neta[anthropic]'``; without the SDK the provider is still
listed, and choosing it says what to install.
"""
