"""TransactWriteItems' idempotency tokens: kept for their 10 minutes as a digest, dropped when they expire, and
bounded in bytes whatever the rate of transactions."""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest

from dynlocust.local import batches, control
from dynlocust.local.config import LocalConfig
from dynlocust.local.errors import ServiceError
from dynlocust.local.idempotency import TOKEN_ENTRY_BYTES, TOKEN_TTL, TOKENS_MAX_BYTES, TokenStore
from dynlocust.local.state import Ctx, State


def _state(now: list[float]) -> State:
    st = State(LocalConfig(), clock=lambda: now[0])
    control.create_table(
        st,
        {
            "TableName": "t",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST",
        },
        Ctx(),
    )
    return st


def test_expired_tokens_are_dropped_and_each_is_kept_as_a_digest() -> None:
    now = [1000.0]
    st = _state(now)

    def write(token: str, payload: str = "x" * 100_000) -> dict[str, Any]:
        item = {"pk": {"S": token}, "v": {"S": payload}}
        req = {"TransactItems": [{"Put": {"TableName": "t", "Item": item}}], "ClientRequestToken": token}
        return batches.transact_write(st, req, Ctx())

    for i in range(50):
        write(f"tok{i}")
        now[0] += 1
    assert len(st.tokens) == 50
    assert {len(st.tokens.digest(t, now[0]) or b"") for t in st.tokens} == {32}  # not the 100 KB request
    now[0] += TOKEN_TTL - 26  # tok0 .. tok24 have expired (tok_i expires at 1600 + i, now is 1624)
    write("late")
    assert sorted(st.tokens) == sorted([f"tok{i}" for i in range(25, 50)] + ["late"])
    now[0] += TOKEN_TTL + 1
    write("last")
    assert list(st.tokens) == ["last"]


def _token(i: int, chars: int, wide: bool) -> str:
    """The i-th token of `chars` digits; `wide`: digits that take 4 bytes each in a str (U+10000 onwards)."""
    digits = f"{i:0{chars}d}"[-chars:]
    return "".join(chr(0x10000 + int(d)) for d in digits) if wide else digits


@pytest.mark.parametrize(
    ("max_bytes", "token_chars", "wide", "written"),
    [
        (64 * 1024, 36, False, 5_000),  # the longest token validation lets through
        (64 * 1024, 36, True, 5_000),  # ... of the widest characters
        (3 * TOKEN_ENTRY_BYTES, 1, True, 10),
        (1024 * 1024, 36, True, 20_000),
        (TOKEN_ENTRY_BYTES, 36, True, 10),  # room for one
    ],
)
def test_token_store_keeps_at_most_its_bytes_and_drops_the_oldest(
    max_bytes: int, token_chars: int, wide: bool, written: int
) -> None:
    tracemalloc.start()
    try:
        store = TokenStore(max_bytes)
        tokens = [_token(i, token_chars, wide) for i in range(written)]
        before = tracemalloc.get_traced_memory()[0]
        for i, tok in enumerate(tokens):
            store.remember(tok, i.to_bytes(32, "big"), 1000.0)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert 0 < len(store) <= max_bytes // TOKEN_ENTRY_BYTES
    assert held <= max_bytes
    assert store.digest(tokens[-1], 1000.0) == (written - 1).to_bytes(32, "big")  # the newest is kept ...
    assert store.digest(tokens[0], 1000.0) is None  # ... the oldest made room


def test_the_default_bound_holds_ten_minutes_of_tokens_at_a_busy_run_s_rate() -> None:
    # 120 transactions/s with a token keep all of theirs the full 10 minutes (see idempotency's docstring)
    assert TOKENS_MAX_BYTES // TOKEN_ENTRY_BYTES >= 120 * TOKEN_TTL


def test_a_transaction_retried_after_its_token_was_dropped_for_room_is_applied_again() -> None:
    now = [1000.0]
    st = _state(now)
    st.tokens = TokenStore(3 * TOKEN_ENTRY_BYTES)

    def write(token: str, value: str) -> dict[str, Any]:
        req = {
            "TransactItems": [{"Put": {"TableName": "t", "Item": {"pk": {"S": token}, "v": {"S": value}}}}],
            "ClientRequestToken": token,
        }
        return batches.transact_write(st, req, Ctx())

    write("a", "1")
    with pytest.raises(ServiceError, match="idempotent token was used with different request parameters"):
        write("a", "2")  # still kept: a different request under it is refused
    for tok in ("b", "c", "d"):
        write(tok, "1")
    assert list(st.tokens) == ["b", "c", "d"]
    write("a", "2")  # dropped for room: the service would refuse this within 10 minutes, the bound accepts it
    assert list(st.tokens) == ["c", "d", "a"]


def test_the_store_s_memory_levels_off_when_its_number_of_tokens_does() -> None:
    # the soak's 700 tokens a minute for 40 minutes: the number kept stops growing at 10 minutes, and so must the
    # memory. One dict taking new tokens and losing old ones stepped up by 11% at minute 16 as its deleted slots
    # filled and its table doubled
    per_minute, minutes = 700, 40
    held: list[int] = []
    tracemalloc.start()
    try:
        store = TokenStore()
        before = tracemalloc.get_traced_memory()[0]
        for i in range(per_minute * minutes):
            now = i * 60 / per_minute
            store.digest("absent", now)
            store.remember(f"{i:036d}", i.to_bytes(32, "big"), now)
            if i % per_minute == per_minute - 1:
                held.append(tracemalloc.get_traced_memory()[0] - before)
    finally:
        tracemalloc.stop()
    assert abs(len(store) - per_minute * TOKEN_TTL / 60) <= 1  # ten minutes of them
    steady = held[11]
    assert max(held[11:]) <= steady * 1.02, [round(h / 1024) for h in held]
