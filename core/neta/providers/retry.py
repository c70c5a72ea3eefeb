"""One retry policy for every provider: which failures are tried again, and after how long.

A provider says what may pass on a second try by raising ``ProviderError(retryable=True)``
(rate limits, 5xx answers, dropped connections, a reply cut off on the way), and how long the
API asked it to wait (``retry_after``, from ``Retry-After``). It does not retry by itself: the
runtime wraps every provider in a ``RetryingProvider``, which waits (exponential backoff with
jitter, or exactly what ``Retry-After`` says) and tries again, a bounded number of times, and
tells the run before each wait so hosts can show it. A failure that no retry can fix (a bad
key, an unknown model) ends the run at once, and so does a connection refused by a loopback
address (``refused_on_loopback``): no server listens there, and none will a second later.
"""

from __future__ import annotations

import asyncio
import email.utils
import errno
import ipaddress
import random
import time
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

from neta.errors import ConfigError, ProviderError
from neta.providers.base import ModelRequest, ModelResponse, Provider, TextSink

DEFAULT_MAX_TRIES = 4
"""Tries per model request (the first one included) before a retryable failure is final."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a failed model request is tried again.

    Attributes:
        max_tries: tries in all, the first one included (1: never retry).
        base_delay: seconds before the second try; each later wait doubles it.
        max_delay: the longest backoff wait, in seconds.
        jitter: the fraction of a backoff wait taken off at random (0 to 1), so that many
            clients turned away at once do not come back at once.
        max_retry_after: the longest ``Retry-After`` honoured, in seconds; an API asking for
            a longer wait fails the request at once instead of holding the run.
    """

    max_tries: int = DEFAULT_MAX_TRIES
    base_delay: float = 1.0
    max_delay: float = 30.0
    jitter: float = 0.5
    max_retry_after: float = 120.0
    _random: Callable[[], float] = field(default=random.random, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_tries < 1:
            raise ConfigError(f"max_tries must be at least 1, not {self.max_tries}")
        if self.base_delay < 0 or self.max_delay < 0 or self.max_retry_after < 0:
            raise ConfigError("retry delays cannot be negative")
        if not 0 <= self.jitter <= 1:
            raise ConfigError(f"jitter is a fraction between 0 and 1, not {self.jitter}")

    def backoff(self, failed: int) -> float:
        """Seconds to wait after ``failed`` tries failed: doubling, capped, jittered."""
        delay = min(self.max_delay, self.base_delay * 2.0 ** (failed - 1))
        return delay * (1.0 - self.jitter * self._random())

    def wait_before_retry(self, error: ProviderError, failed: int) -> float | None:
        """Seconds to wait before trying again after ``failed`` tries, or ``None``: give up."""
        if not error.retryable or failed >= self.max_tries or refused_on_loopback(error):
            return None
        if error.retry_after is not None:
            if error.retry_after > self.max_retry_after:
                return None
            return max(0.0, error.retry_after)
        return self.backoff(failed)


@dataclass(frozen=True)
class RetryNotice:
    """A failed try that will be tried again, told before the wait.

    Attributes:
        attempt: the try that failed (1 for the first).
        max_tries: the policy's bound.
        delay: seconds until the next try.
        reason: why, in a few words (``rate limited``, ``server error 503``...).
        error: the failure itself.
    """

    attempt: int
    max_tries: int
    delay: float
    reason: str
    error: ProviderError


RetryListener = Callable[[RetryNotice], None]
"""Called before each wait (the runtime turns it into a ``provider_retry`` event)."""


class RetryingProvider:
    """A provider whose retryable failures are tried again under ``policy``.

    Text already streamed by a failed try stays with the listener; the next try streams its
    reply from the start (the ``provider_retry`` event between them says so).

    Args:
        provider: the provider to call.
        policy: when and how often to try again.
        on_retry: told before each wait.
    """

    def __init__(
        self,
        provider: Provider,
        policy: RetryPolicy | None = None,
        on_retry: RetryListener | None = None,
    ) -> None:
        self.provider = provider
        self.policy = policy or RetryPolicy()
        self.on_retry = on_retry

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """Send ``request`` until it succeeds, fails for good, or the tries run out.

        Raises:
            ProviderError: the last failure; after several tries its message says how many,
                and when the API asked for a longer wait than the policy allows, that too.
        """
        failed = 0
        while True:
            try:
                return await self.provider.complete(request, on_text)
            except ProviderError as exc:
                failed += 1
                delay = self.policy.wait_before_retry(exc, failed)
                if delay is None:
                    raise _final(exc, failed, self.policy) from exc
                if self.on_retry is not None:
                    self.on_retry(
                        RetryNotice(failed, self.policy.max_tries, delay, retry_reason(exc), exc)
                    )
                await asyncio.sleep(delay)


def _final(error: ProviderError, failed: int, policy: RetryPolicy) -> ProviderError:
    notes = []
    if error.retryable and error.retry_after is not None and failed < policy.max_tries:
        notes.append(
            f"the API asks to wait {error.retry_after:g} s, more than the "
            f"{policy.max_retry_after:g} s the retry policy waits"
        )
    if failed > 1:
        notes.append(f"gave up after {failed} tries")
    if not notes:
        return error
    return ProviderError(
        f"{error.detail} ({'; '.join(notes)})",
        retryable=error.retryable,
        retry_after=error.retry_after,
        status=error.status,
        provider=error.provider,
        model=error.model,
        url=error.url,
    )


def refused_on_loopback(error: ProviderError) -> bool:
    """Whether ``error`` is a connection refused by this machine (``localhost``, 127.x, ::1).

    The provider's URL (``error.url``) says where it connected; the refusal is in what the
    error was raised from (``ConnectionRefusedError``, ``ECONNREFUSED``).
    """
    host = urllib.parse.urlsplit(error.url or "").hostname
    if host is None:
        return False
    if host != "localhost" and not host.endswith(".localhost"):
        try:
            if not ipaddress.ip_address(host).is_loopback:
                return False
        except ValueError:  # a name: it may point anywhere
            return False
    return any(
        isinstance(cause, ConnectionRefusedError)
        or (isinstance(cause, OSError) and cause.errno == errno.ECONNREFUSED)
        for cause in _causes(error)
    )


def _causes(error: BaseException) -> Iterator[BaseException]:
    """What ``error`` was raised from or during, innermost last (each once)."""
    seen: set[int] = set()
    cause = error.__cause__ or error.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        yield cause
        cause = cause.__cause__ or cause.__context__


def retryable_status(status: int) -> bool:
    """Whether an answer with HTTP ``status`` may pass on a second try (408, 409, 429, 5xx)."""
    return status in (408, 409, 429) or status >= 500


def retry_reason(error: ProviderError) -> str:
    """Why a request is tried again, in a few words a terminal can show."""
    if error.status == 429:
        return "rate limited"
    if error.status == 529:
        return "overloaded"
    if error.status is not None and error.status >= 500:
        return f"server error {error.status}"
    return "request failed"


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds an API asked to wait: ``retry-after-ms``, or ``retry-after`` (seconds or a date).

    Header names are matched without regard to case; anything unreadable counts as absent.
    """
    lowered = {key.lower(): value for key, value in headers.items()}
    millis = _number(lowered.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    seconds = _number(raw)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _number(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if value >= 0 and value == value else None  # no negatives, no NaN
