"""Idempotency tokens of TransactWriteItems (and ExecuteTransaction): each kept 10 minutes, in bounded memory.

The service keeps a ClientRequestToken valid for 10 minutes after the first request that used it (TransactWriteItems
API reference, ClientRequestToken), so the endpoint keeps a digest of each request that long. Kept by time alone,
their memory would grow with the rate of transactions: the endpoint runs on the load generator's own machine, so
the tokens are bounded in bytes too, and past the bound the oldest are dropped before they expire. The bound holds
10 minutes of tokens up to 120 transactions/s, and at 3,600/s still 20 s of them: what matters most is that an SDK's
retry finds its token, and botocore's standard retry mode waits at most 20 s between attempts
(botocore/retries/standard.py, _MAX_BACKOFF).
"""

from __future__ import annotations

from collections.abc import Iterator

#: How long the service honours a token (TransactWriteItems API reference: "valid for 10 minutes").
TOKEN_TTL = 600.0
#: The bytes all kept tokens may hold (see the module's docstring for why this much).
TOKENS_MAX_BYTES = 32 * 1024 * 1024
#: What one kept token holds at most: its key (a str of at most 36 characters, as validation checks, of 4 bytes each
#: at worst: 220 B), the 32-byte digest (65 B), the (digest, expiry) tuple with its GC header (72 B), the expiry
#: (24 B) and the dict's slot for it (24 B of entry and 4 B of index, three times over just after the dict grows).
TOKEN_ENTRY_BYTES = 220 + 65 + 72 + 24 + 84


class TokenStore:
    """ClientRequestToken -> (digest of the request, expiry), oldest first, at most `max_bytes` of them."""

    __slots__ = ("_entries", "max_entries")

    def __init__(self, max_bytes: int = TOKENS_MAX_BYTES) -> None:
        self.max_entries = max(1, max_bytes // TOKEN_ENTRY_BYTES)
        # in order of expiry: every token has the same lifetime and is re-inserted when it is used again
        self._entries: dict[str, tuple[bytes, float]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def digest(self, token: str, now: float) -> bytes | None:
        """The digest of the request that used `token` within its lifetime, or None; drops the expired ones."""
        entries = self._entries
        while entries:  # only the oldest are looked at: the first one still alive ends the walk
            oldest = next(iter(entries))
            if entries[oldest][1] > now:
                break
            del entries[oldest]
        hit = entries.get(token)
        return None if hit is None or hit[1] <= now else hit[0]

    def remember(self, token: str, digest: bytes, now: float) -> None:
        """Keep `token` for TOKEN_TTL from `now`, dropping the oldest tokens when the store is full."""
        entries = self._entries
        entries.pop(token, None)
        while len(entries) >= self.max_entries:
            del entries[next(iter(entries))]
        entries[token] = (digest, now + TOKEN_TTL)
