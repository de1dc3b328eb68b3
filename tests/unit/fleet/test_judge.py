"""The fleet's rule for an inconclusive run: too few windows said anything about the service."""

from __future__ import annotations

import pytest

from dynlocust.fleet.judge import inconclusive, window_judged
from dynlocust.run.verdict import Verdict

OK = Verdict(("ok",))
THROTTLED = Verdict(("throttled", "client-bound"), stronger="service")
CLIENT = Verdict(("client-bound",), reasons=("cpu",))
NOT_RUN = Verdict(("not-run",), ran=0.0)


@pytest.mark.parametrize(
    ("detail", "judged"),
    [
        (OK, True),
        (Verdict(("ok", "client-bound"), stronger="service", reasons=("lag",)), True),  # the table took what was sent
        (THROTTLED, True),
        (Verdict(("errors",)), True),
        (CLIENT, False),
        (Verdict(("client-bound", "throttled"), stronger="client"), False),
        (NOT_RUN, False),
        (Verdict(("partial",), ran=0.95), True),
        (Verdict(("partial",), ran=0.5), False),
        (None, False),
    ],
)
def test_a_window_is_judged_when_its_verdict_is_the_services(detail: Verdict | None, judged: bool) -> None:
    assert window_judged(detail) is judged


@pytest.mark.parametrize(
    ("details", "planned", "expected"),
    [
        ([OK, OK, OK, OK], 4, False),
        ([OK, CLIENT, CLIENT, CLIENT], 4, True),  # the run: 3 of 4 client-bound
        ([OK, THROTTLED, CLIENT, CLIENT], 4, False),  # half judged is enough
        ([OK, NOT_RUN, NOT_RUN], 3, True),
        ([OK, OK], 5, True),  # windows that never closed were not judged either
        ([CLIENT, CLIENT, CLIENT, CLIENT], 4, True),  # no judged window never passes
        ([], 0, False),
    ],
)
def test_a_run_is_inconclusive_when_fewer_than_half_its_windows_were_judged(
    details: list[Verdict | None], planned: int, expected: bool
) -> None:
    assert inconclusive(details, planned) is expected
