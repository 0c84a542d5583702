"""Per-client rate limit: a token bucket per API key (per address for unkeyed reads)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

_MAX_BUCKETS = 10_000  # past this many clients, buckets that are full again are forgotten


@dataclass
class _Bucket:
    tokens: float
    at: float


class RateLimiter:
    """`burst` requests at once, then `per_minute` a minute; `per_minute == 0` turns it off."""

    def __init__(self, per_minute: int, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self.clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, client: str) -> float | None:
        """None when the request may go on; else the seconds until it may be sent again."""
        if self.rate <= 0:
            return None
        now = self.clock()
        with self._lock:
            bucket = self._buckets.get(client)
            if bucket is None:
                if len(self._buckets) >= _MAX_BUCKETS:
                    self._forget_full(now)
                bucket = self._buckets[client] = _Bucket(self.burst, now)
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate)
            bucket.at = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return None
            return (1.0 - bucket.tokens) / self.rate

    def _forget_full(self, now: float) -> None:
        full = [c for c, b in self._buckets.items() if b.tokens + (now - b.at) * self.rate >= self.burst]
        for client in full:
            del self._buckets[client]
