"""Model providers: the interface, and the built-in implementations."""
