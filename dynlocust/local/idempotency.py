"""Idempotency tokens of TransactWriteItems (and ExecuteTransaction): each kept 10 minutes, in bounded memory.

The service keeps a ClientRequestToken valid for 10 minutes after the first request that used it (TransactWriteItems
API reference, ClientRequestToken), so the endpoint keeps a digest of each request that long. Kept by time alone,
their memory would grow with the rate of transactions: the endpoint runs on the load generator's own machine, so
the tokens are bounded in bytes too, and past the bound the oldest are dropped before they expire. The bound holds
10 minutes of tokens up to 120 transactions/s, and at 3,600/s still 20 s of them: what matters most is that an SDK's
retry finds its token, and botocore's standard retry mode waits at most 20 s between attempts
(botocore/retries/standard.py, _MAX_BACKOFF).

The tokens are kept in generations: a generation takes new tokens for GENERATION_S at most, then only loses them
as they expire, and is dropped once empty. One dict that took new tokens and lost old ones would grow its table as
its deleted slots filled: at `bench_endpoint_soak.py`'s 700 tokens a minute its table doubled 16 minutes in (+200 KB,
11%), long after the number of tokens had stopped growing. Generations hold what the tokens need, no more.
"""

from __future__ import annotations

from collections.abc import Iterator

#: How long the service honours a token (TransactWriteItems API reference: "valid for 10 minutes").
TOKEN_TTL = 600.0
#: The bytes all kept tokens may hold (see the module's docstring for why this much).
TOKENS_MAX_BYTES = 32 * 1024 * 1024
#: What one kept token holds at most: its key (a str of at most 36 characters, as validation checks, of 4 bytes each
#: at worst: 220 B), the 32-byte digest (65 B), the (digest, expiry) tuple with its GC header (72 B), the expiry
#: (24 B) and its generation's dict slot for it (24 B of entry and 4 B of index, three times over just after the dict
#: grows).
TOKEN_ENTRY_BYTES = 220 + 65 + 72 + 24 + 84
#: Seconds a generation takes new tokens: a tenth of their lifetime, so that about 11 generations are kept.
GENERATION_S = TOKEN_TTL / 10
#: A generation also stops taking tokens at this many, or at a sixteenth of the bound if that is more: at a rate
#: that fills the bound, no generation holds more than a sixteenth of it.
GENERATION_MIN_TOKENS = 64


class TokenStore:
    """ClientRequestToken -> (digest of the request, expiry), oldest first, at most `max_bytes` of them."""

    __slots__ = ("_count", "_generations", "_opened", "_per_generation", "max_entries")

    def __init__(self, max_bytes: int = TOKENS_MAX_BYTES) -> None:
        self.max_entries = max(1, max_bytes // TOKEN_ENTRY_BYTES)
        self._per_generation = max(GENERATION_MIN_TOKENS, self.max_entries // 16)
        # oldest first, each in order of expiry: every token has the same lifetime and is re-inserted when reused
        self._generations: list[dict[str, tuple[bytes, float]]] = []
        self._opened = 0.0  # when the newest generation started taking tokens
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        for generation in self._generations:
            yield from generation

    def digest(self, token: str, now: float) -> bytes | None:
        """The digest of the request that used `token` within its lifetime, or None; drops the expired ones."""
        generations = self._generations
        while generations:  # only the oldest are looked at: the first one still alive ends the walk
            oldest = generations[0]
            while oldest:
                first = next(iter(oldest))
                if oldest[first][1] > now:
                    break
                del oldest[first]
                self._count -= 1
            if oldest:
                break
            del generations[0]
        for generation in reversed(generations):
            hit = generation.get(token)
            if hit is not None:
                return None if hit[1] <= now else hit[0]
        return None

    def remember(self, token: str, digest: bytes, now: float) -> None:
        """Keep `token` for TOKEN_TTL from `now`, dropping the oldest tokens when the store is full."""
        generations = self._generations
        for i, generation in enumerate(generations):
            if generation.pop(token, None) is not None:
                self._count -= 1
                if not generation:
                    del generations[i]
                break
        while self._count >= self.max_entries:
            oldest = generations[0]
            del oldest[next(iter(oldest))]
            self._count -= 1
            if not oldest:
                del generations[0]
        if not generations or now - self._opened >= GENERATION_S or len(generations[-1]) >= self._per_generation:
            generations.append({})
            self._opened = now
        generations[-1][token] = (digest, now + TOKEN_TTL)
        self._count += 1
