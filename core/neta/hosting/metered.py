"""The hub's parts, as its metrics see them: failed store and bus calls, timed model calls.

``counting_failures`` wraps a store, its ``run_calls()`` or a bus: every method call goes to
the part itself, and one that fails with ``StorageUnavailable`` (how every engine says it
cannot do what was asked) is counted first. Nothing else changes: attributes are the part's,
and the hub and whatever it hands the part to use it as before.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from neta.errors import StorageUnavailable
from neta.providers.base import ModelRequest, ModelResponse, Provider, TextSink

T = TypeVar("T")


def counting_failures(part: T, count: Callable[[], None]) -> T:
    """``part``, whose calls failing with ``StorageUnavailable`` call ``count`` first."""
    return cast(T, _Counting(part, count))


class _Counting:
    """The proxy ``counting_failures`` makes."""

    def __init__(self, part: object, count: Callable[[], None]) -> None:
        object.__setattr__(self, "_part", part)
        object.__setattr__(self, "_count", count)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._part, name, value)  # the part's, as every attribute read is

    def __delattr__(self, name: str) -> None:
        delattr(self._part, name)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._part, name)
        if not inspect.ismethod(value):
            return value
        count = self._count
        if inspect.iscoroutinefunction(value):

            @functools.wraps(value)
            async def counted_async(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await value(*args, **kwargs)
                except StorageUnavailable:
                    count()
                    raise

            return counted_async

        @functools.wraps(value)
        def counted(*args: Any, **kwargs: Any) -> Any:
            try:
                result = value(*args, **kwargs)
            except StorageUnavailable:
                count()
                raise
            return _Counting(result, count) if name == "run_calls" else result

        return counted

    def __repr__(self) -> str:
        return repr(self._part)


class TimedProvider:
    """A provider whose every request's time goes to ``record(seconds, failed=...)``.

    A request that is cancelled (the run was) is not recorded.
    """

    def __init__(self, provider: Provider, record: Callable[..., None]) -> None:
        self.provider = provider
        self._record = record

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """The wrapped provider's answer, timed."""
        started = time.monotonic()
        try:
            response = await self.provider.complete(request, on_text)
        except Exception:
            self._record(time.monotonic() - started, failed=True)
            raise
        self._record(time.monotonic() - started, failed=False)
        return response

    def __getattr__(self, name: str) -> Any:
        return getattr(self.provider, name)
