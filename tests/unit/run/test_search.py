"""The ceiling search's state machine against a table simulated from the capacity model's rule: below the ceiling
nothing is refused; above it, a burst of `burst` seconds of the ceiling passes, then the excess is refused."""

from __future__ import annotations

import math

import pytest

from dynlocust.run.search import CeilingSearch, Steady, outcome_of, sentence
from dynlocust.run.verdict import Verdict
from dynlocust.scenario.model import Search

OK = Verdict(("ok",))
THROTTLED = Verdict(("throttled",))
CLIENT = Verdict(("client-bound",), reasons=("cpu",))


def probe(rate: float, ceiling: float, window: float, burst: float, bin_s: float = 1.0) -> tuple[Verdict, Steady]:
    """What a table with `ceiling` and a full burst does to a probe of `window` seconds at `rate`."""
    sent = round(rate * window)
    if rate <= ceiling:
        return OK, Steady(sent, 0, 0.0)
    first = ceiling * burst / (rate - ceiling)  # seconds until the burst is spent
    if first >= window:
        return OK, Steady(sent, 0, 0.0)
    refused = (rate - ceiling) * (window - first)
    steady_from = max(first, bin_s)
    steady_refused = (rate - ceiling) * max(0.0, window - steady_from)
    steady_sent = rate * (window - bin_s)
    return THROTTLED, Steady(round(steady_sent), round(steady_refused), refused / sent)


def run_search(ceiling: float, search: Search, burst: float) -> CeilingSearch:
    state = CeilingSearch(search, burst, ("orders",))
    index = 0
    while state.stopped is None:
        rate = state.next_rate()
        verdict, steady = probe(rate, ceiling, search.window, burst)
        state.observe(
            index, rate, verdict, steady, ("TableWriteKeyRangeThroughputExceeded",) if steady.throttled else ()
        )
        index += 1
    return state


def fixed_ramp_windows(start: float, ceiling: float, width: float) -> int:
    """Windows a fixed ramp from `start` in steps of `width` (the search's final bracket) takes to cross `ceiling`."""
    return math.floor((ceiling - start) / width) + 2  # the last clean step, then the first throttled one


@pytest.mark.parametrize("ceiling", [206.5, 619.5, 4130.0, 12390.0, 55.0, 1000.0])
@pytest.mark.parametrize("start", [50.0, 1000.0])
def test_the_bracket_holds_the_ceiling_and_closes_to_the_precision(ceiling: float, start: float) -> None:
    search = Search(start=start, window=30.0, precision=0.02, max_windows=30)
    state = run_search(ceiling, search, burst=0.1)
    assert state.stopped == "precision"
    assert state.low is not None and state.high is not None
    assert state.low <= ceiling < state.high
    assert (state.high - state.low) / state.low < 0.02
    assert state.found and state.limited_by == "dynamodb"
    assert len(state.probes) < fixed_ramp_windows(min(start, ceiling / 2), ceiling, 0.02 * ceiling)


def test_a_clean_probe_proves_only_its_steady_rate() -> None:
    """A probe 0.5 % over the ceiling hides its excess in the burst: clean, yet the bracket stays honest."""
    search = Search(start=100.0, window=12.0, precision=0.02)
    state = CeilingSearch(search, burst=0.1)
    state.observe(0, 207.5, OK, Steady(2490, 0, 0.0))
    assert state.low is not None and state.low == pytest.approx(207.5 * 12 / 12.1)
    assert state.low < 206.5


def test_a_first_probe_above_the_ceiling_shrinks_by_the_factor() -> None:
    state = run_search(100.0, Search(start=1000.0, window=30.0, precision=0.02, max_windows=30), burst=0.1)
    assert [p.rate for p in state.probes[:3]] == pytest.approx([1000.0, 1000 / 1.5, 1000 / 1.5**2])
    assert state.low is not None and state.high is not None and state.low <= 100.0 < state.high


def test_max_windows_stops_and_says_so() -> None:
    state = run_search(4130.0, Search(start=1000.0, window=30.0, precision=0.02, max_windows=4), burst=0.1)
    assert state.stopped == "max_windows" and len(state.probes) == 4
    assert state.high is None  # 1000, 1500, 2250, 3375 are clean; 5062 would have been the first throttled
    record = state.record()
    assert record["stopped"] == "max_windows"


def test_max_windows_without_a_throttle_finds_no_ceiling() -> None:
    state = run_search(1e6, Search(start=10.0, window=30.0, max_windows=3), burst=0.1)
    assert state.stopped == "max_windows" and state.high is None and not state.found
    assert state.limited_by is None
    assert "No ceiling found" in sentence(state.record())


def test_a_client_bound_probe_stops_the_search_and_names_the_rate() -> None:
    state = CeilingSearch(Search(start=100.0, window=30.0), burst=0.1)
    state.observe(0, 100.0, OK, Steady(1200, 0, 0.0))
    state.observe(1, 150.0, CLIENT, Steady(900, 0, 0.0, 0.5))
    assert state.stopped == "client-bound" and not state.found
    record = state.record()
    assert record["limited_by"] == "client" and record["rate"] == 150.0 and record["high"] is None
    assert "could not offer 150/s" in sentence(record)


def test_sporadic_throttles_in_the_steady_part_are_not_the_ceiling() -> None:
    """One throttle in 2,000 steady sends is below a quarter of a 2 % precision: the client's jitter."""
    assert outcome_of(Verdict(("throttled",)), Steady(2000, 1, 0.0005), 0.005) == "clean"
    assert outcome_of(Verdict(("throttled",)), Steady(2000, 30, 0.015), 0.005) == "throttled"
    assert outcome_of(Verdict(("throttled", "client-bound")), Steady(2000, 30, 0.015), 0.005) == "throttled"
    assert outcome_of(Verdict(("client-bound", "throttled")), Steady(2000, 1, 0.0), 0.005) == "client-bound"
    assert outcome_of(Verdict(("partial", "throttled"), ran=0.6), Steady(2000, 30, 0.015), 0.005) == "partial"
    assert outcome_of(Verdict(("not-run",), ran=0.0), None, 0.005) == "unjudged"
    assert outcome_of(Verdict(("errors",)), Steady(2000, 0, 0.0), 0.005) == "unjudged"


def test_the_sentence_reads_like_the_issue() -> None:
    state = CeilingSearch(Search(start=3000.0, window=120.0, op="write"), burst=1.0, tables=("orders",))
    state.observe(0, 4170.0, THROTTLED, Steady(450_000, 4_000, 0.01), ("TableWriteKeyRangeThroughputExceeded",))
    state.observe(1, 4124.0, OK, Steady(450_000, 0, 0.0))
    text = sentence(state.record())
    assert text.startswith("DynamoDB's write ceiling for table orders is 4,130/s (between 4,090 and 4,170, ")
    assert "TableWriteKeyRangeThroughputExceeded), found in 2 windows" in text


def test_a_client_that_sent_nearly_all_its_sends_still_probed() -> None:
    """15 of 750 sends dropped at start-up, nothing refused: clean at the rate the client did offer."""
    state = CeilingSearch(Search(start=50.0, window=15.0, precision=0.03), burst=0.1)
    state.observe(0, 50.0, Verdict(("client-bound",), reasons=("dropped",)), Steady(735, 0, 0.0, 15 / 750))
    assert state.probes[0].outcome == "clean" and state.stopped is None
    assert state.low == pytest.approx(50.0 * 735 / 750 * 15 / 15.1)
    state.observe(1, 75.0, Verdict(("client-bound",), reasons=("dropped",)), Steady(700, 0, 0.0, 0.25))
    assert state.stopped == "client-bound"


def test_a_partial_probe_is_played_again() -> None:
    """A worker lost mid-probe: the window is partial, the fleet re-balances, and the same rate is probed again."""
    state = CeilingSearch(Search(start=100.0, window=30.0, max_windows=5), burst=0.1)
    state.observe(0, 100.0, OK, Steady(3000, 0, 0.0))
    state.observe(1, 150.0, Verdict(("partial",), ran=0.5), Steady(2000, 0, 0.0))
    assert state.stopped is None and state.next_rate() == 150.0 and state.clean == 100.0
    state.observe(2, 150.0, OK, Steady(4500, 0, 0.0))
    assert state.next_rate() == 225.0
