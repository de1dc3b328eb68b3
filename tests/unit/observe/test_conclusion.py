"""The end-of-run conclusion: it follows the windows' verdicts and names the windows it rests on."""

from __future__ import annotations

from typing import Any

from dynlocust.observe.conclusion import conclude, window_list
from dynlocust.run.saturation import Saturation
from dynlocust.run.verdict import Verdict

HEALTHY = Saturation(False, (), 0.04, 0.001, 0, 0, cpu_seconds=15.0, late_bound=0.025, due=750, sent=750)


def record(
    index: int,
    target: float,
    accepted: float,
    labels: tuple[str, ...],
    *,
    stronger: str | None = None,
    saturation: Saturation = HEALTHY,
    workers: tuple[int, ...] = (),
    ran: float = 1.0,
) -> dict[str, Any]:
    reasons = saturation.reasons if "client-bound" in labels else ()
    verdict = Verdict(labels, ran=ran, stronger=stronger, reasons=reasons, workers=workers)
    return {
        "index": index,
        "summary": {"target_rate": target, "accepted_per_s": accepted},
        "verdict": verdict.label,
        "verdict_detail": verdict.to_dict(),
        "saturation": saturation.to_dict(),
    }


def test_window_list() -> None:
    # window indexes, numbered from 1 as people count them
    assert window_list([3]) == "window 4"
    assert window_list([1, 4]) == "windows 2, 5"
    assert window_list([4, 1, 2, 3]) == "windows 2-5"
    assert window_list([0, 1, 3]) == "windows 1, 2, 4"


def test_a_clean_ramp_across_the_ceiling_blames_dynamodb() -> None:
    windows = [
        record(0, 50, 50.0, ("ok",)),
        record(1, 100, 100.0, ("ok",)),
        record(2, 150, 104.0, ("throttled",)),
        record(3, 200, 103.2, ("throttled",)),
    ]
    c = conclude(windows)
    assert c.text == (
        "DynamoDB capped accepted requests at 103.6/s from window 3 on (offered 150-200/s); "
        "the client was not the limit."
    )
    assert (c.service_limited, c.client_limited, c.incomplete) == ((2, 3), (), ())


def test_a_client_bound_window_says_the_limit_is_unknown_above_it_and_what_to_do() -> None:
    starved = Saturation(True, ("cpu",), 0.97, 0.002, 0, 0, cpu_seconds=15.0, late_bound=0.025, due=3000, sent=3000)
    windows = [record(0, 100, 100.0, ("ok",)), record(1, 200, 198.0, ("client-bound",), saturation=starved)]
    c = conclude(windows)
    assert c.text == (
        "Window 2 is client-bound (cpu; CPU 0.97 of a core): the run cannot tell where DynamoDB's limit is above "
        "198.0/s; add workers or processes."
    )
    assert c.client_limited == (1,) and c.service_limited == ()


def test_both_sides_name_the_stronger_and_the_fleet_worker() -> None:
    lagging = Saturation(True, ("lag",), 0.5, 0.09, 0, 0, cpu_seconds=15.0, late=40, late_bound=0.025, due=1500,
                         sent=1500, workers=(1,))  # fmt: skip
    dropping = Saturation(True, ("dropped",), 0.5, 0.09, 900, 0, cpu_seconds=15.0, late_bound=0.025, due=3000,
                          sent=2100, workers=(0,))  # fmt: skip
    windows = [
        record(0, 100, 95.0, ("throttled", "client-bound"), stronger="service", saturation=lagging, workers=(1,)),
        record(1, 200, 90.0, ("client-bound", "throttled"), stronger="client", saturation=dropping, workers=(0,)),
    ]
    c = conclude(windows)
    assert "DynamoDB capped accepted requests at 95.0/s in window 1 (offered 100.0/s)" in c.text
    assert "the client was also limited in window 1 (lag; 40 of 1,500 sends late by > 25 ms; on worker 1)" in c.text
    assert "Window 2 is client-bound (dropped; 900 of 3,000 sends dropped; on worker 0)" in c.text
    assert c.text.endswith(
        "(dropped; 900 of 3,000 sends dropped; on worker 0): it is not used for the ceiling; raise concurrency."
    )
    assert c.client_limited == (0, 1) and c.service_limited == (0,)


def test_several_client_bound_windows_show_the_strongest_evidence() -> None:
    def dropping(n: int) -> Saturation:
        return Saturation(
            True, ("dropped",), 0.2, 0.05, n, 0, cpu_seconds=5.0, late_bound=0.025, due=1000, sent=1000 - n
        )

    windows = [record(i, 100, 90.0, ("client-bound",), saturation=dropping(n)) for i, n in enumerate((50, 300, 20))]
    c = conclude(windows)
    assert c.text.startswith(
        "No window could be judged: nothing can be concluded about DynamoDB's limit. "
        "Windows 1-3 are client-bound (dropped; window 2: 300 of 1,000 sends dropped): "
    )


def test_a_run_stopped_mid_way_judges_only_what_ran() -> None:
    windows = [
        record(0, 50, 50.0, ("ok",)),
        record(1, 100, 40.0, ("partial",), ran=0.4),
        record(2, 150, 0.0, ("not-run",), ran=0.0),
        record(3, 200, 0.0, ("not-run",), ran=0.0),
    ]
    c = conclude(windows)
    assert c.text == (
        "DynamoDB accepted the load offered, up to 50.0/s (window 1), without throttling; the client was not the "
        "limit. Windows 3, 4 did not run; window 2 ran 40% of its schedule: they are not judged."
    )
    assert c.incomplete == (1, 2, 3) and c.client_limited == ()
    nothing = conclude([record(0, 50, 10.0, ("partial",), ran=0.2)])
    assert nothing.text.startswith("No window ran in full: nothing can be concluded")


def test_errors_are_the_tests_failure() -> None:
    c = conclude([record(0, 50, 10.0, ("errors",))])
    assert c.text == "Window 1 failed mostly with errors: the test, not DynamoDB, failed." and c.errors == (0,)


def test_old_records_without_detail_still_conclude() -> None:
    old = {"index": 0, "summary": {"target_rate": 50, "accepted_per_s": 40.0}, "verdict": "throttled"}
    assert conclude([old]).service_limited == (0,)


def test_the_ceiling_is_named_from_the_first_window_that_reached_it_not_the_first_throttle() -> None:
    # the run: window 1 throttled while accepting 6.0/s, the ceiling of ~23.8/s came from window 3 on
    windows = [
        record(0, 6, 6.0, ("throttled",)),
        record(1, 17, 16.1, ("throttled",)),
        record(2, 28, 23.6, ("throttled",)),
        record(3, 39, 23.8, ("throttled",)),
        record(4, 50, 24.0, ("throttled",)),
    ]
    c = conclude(windows)
    assert c.text == (
        "DynamoDB capped accepted requests at 23.8/s from window 3 on (offered 28-50/s); "
        "it throttled already in windows 1, 2, below the ceiling (6.0/s, 16.1/s accepted); "
        "the client was not the limit."
    )
    assert c.service_limited == (0, 1, 2, 3, 4)


def test_a_ceiling_reached_by_one_window_among_ok_ones_is_named_in_that_window() -> None:
    windows = [
        record(0, 50, 50.0, ("throttled",)),
        record(1, 150, 104.0, ("throttled",)),
        record(2, 100, 100.0, ("ok",)),
    ]
    assert conclude(windows).text.startswith(
        "DynamoDB capped accepted requests at 104.0/s in window 2 (offered 150.0/s); "
        "it throttled already in window 1, below the ceiling (50.0/s accepted)"
    )


def test_throttles_with_a_known_why_get_a_sentence_each() -> None:
    windows = [
        record(0, 50, 50.0, ("ok",)),
        record(1, 150, 104.0, ("throttled",)),
        record(2, 200, 103.0, ("throttled",)),
    ]
    for w in windows[1:]:
        w["summary"]["throttle_causes"] = {"writes-over-ceiling": 6}
    windows[2]["summary"]["throttled_index"] = {"by_owner|IndexWriteKeyRangeThroughputExceeded": 40}
    text = conclude(windows).text
    assert text.endswith(
        "Writes to items throttled by GSI by_owner (IndexWriteKeyRangeThroughputExceeded) (40 requests in window 3). "
        "Reads throttled: writes over the ceiling hold the table's shared on-demand capacity "
        "(12 requests in windows 2, 3)."
    ), text
    for w in windows:  # against AWS there is no cause header and no index refused: nothing is added
        w["summary"].pop("throttle_causes", None)
        w["summary"].pop("throttled_index", None)
    assert "Reads throttled" not in conclude(windows).text and "GSI" not in conclude(windows).text


def test_contention_is_named_with_its_figure_and_its_advice() -> None:
    """The issue's case: sends late and dropped while the process waited for a CPU that other processes held.
    More users would not have helped (the drops came while users were free), nor more processes."""
    contended = Saturation(True, ("machine-busy", "lag", "dropped"), 0.12, 0.4, 424, 0, cpu_seconds=15.0,
                           late=900, late_bound=0.05, due=3000, sent=2576, stalled=400, cpu_wait=3.24,
                           cpu_pressure=14.1)  # fmt: skip
    c = conclude([record(0, 50, 50.0, ("ok",)), record(1, 200, 171.0, ("client-bound",), saturation=contended)])
    assert "this process waited 3.2 s of 15 s for a CPU (on the machine, some task waited 14.1 s)" in c.text
    assert "while other processes held the cores" in c.text
    assert c.text.endswith("run it on a quieter machine or with fewer processes.")
    assert "raise concurrency" not in c.text and "add workers" not in c.text


def test_contention_outweighed_by_refusals_is_still_named_with_its_advice() -> None:
    """CI's contended quickstart: DynamoDB refused more than the starved client missed, so the cap is stated, and
    the contention that also limited those windows still gets its figure and what to change."""
    contended = Saturation(True, ("machine-busy", "lag", "dropped"), 0.05, 0.4, 29, 0, cpu_seconds=7.44,
                           late=700, late_bound=0.05, due=1500, sent=1471, stalled=29, cpu_wait=6.9,
                           cpu_pressure=7.4)  # fmt: skip
    windows = [
        record(0, 50, 50.0, ("ok",)),
        record(1, 100, 100.0, ("ok",)),
        record(2, 150, 117.7, ("throttled", "client-bound"), stronger="service", saturation=contended),
        record(3, 200, 117.7, ("throttled", "client-bound"), stronger="service", saturation=contended),
    ]
    c = conclude(windows)
    assert "DynamoDB capped accepted requests at 117.7/s from window 3 on" in c.text
    assert "this process waited 6.9 s of 7.44 s for a CPU" in c.text
    assert c.text.endswith(
        "but DynamoDB's refusals outweigh that; to rule the client out, "
        "run it on a quieter machine or with fewer processes."
    )
    assert "raise concurrency" not in c.text and "add workers" not in c.text


def test_contention_keeps_its_figure_when_another_window_fell_shorter() -> None:
    """The figures shown are the worst window's; when that one was not `machine-busy`, the contention named in the
    reasons still gets its wait, from the strongest window that has it."""
    busy = Saturation(True, ("machine-busy", "lag"), 0.05, 0.3, 0, 0, cpu_seconds=7.5, late=300, late_bound=0.05,
                      due=1125, sent=1125, cpu_wait=5.1)  # fmt: skip
    short = Saturation(True, ("lag", "dropped"), 0.1, 0.4, 200, 0, cpu_seconds=7.5, late=700, late_bound=0.05,
                       due=1500, sent=1300, stalled=200, cpu_wait=0.4)  # fmt: skip
    windows = [
        record(0, 150, 140.0, ("client-bound",), saturation=busy),
        record(1, 200, 170.0, ("client-bound",), saturation=short),
    ]
    text = conclude(windows).text
    assert "window 2: 700 of 1,500 sends late by > 50 ms" in text, text
    assert "window 1: this process waited 5.1 s of 7.5 s for a CPU while other processes held the cores" in text, text
    assert "run it on a quieter machine or with fewer processes" in text


def test_every_reason_named_for_a_group_has_its_figure() -> None:
    """A process that used its core in one window and dropped sends in another: both figures, each its window's."""
    hot = Saturation(True, ("cpu",), 0.96, 0.01, 0, 0, cpu_seconds=15.0, late_bound=0.05, due=1500, sent=1500)
    dropping = Saturation(True, ("dropped",), 0.3, 0.1, 400, 0, cpu_seconds=15.0, late_bound=0.05, due=1500,
                          sent=1100)  # fmt: skip
    windows = [
        record(0, 100, 100.0, ("client-bound",), saturation=hot),
        record(1, 100, 73.0, ("client-bound",), saturation=dropping),
    ]
    text = conclude(windows).text
    assert "(cpu, dropped; window 2: 400 of 1,500 sends dropped; window 1: CPU 0.96 of a core)" in text, text


def test_more_users_are_advised_only_when_the_users_were_all_busy() -> None:
    def dropping(stalled: int, cpu: float = 0.3) -> Saturation:
        reasons = ("cpu", "dropped") if cpu >= 0.9 else ("dropped",)
        return Saturation(True, reasons, cpu, 0.1, 300, 0, cpu_seconds=15.0, late_bound=0.05, due=1500, sent=1200,
                          stalled=stalled)  # fmt: skip

    def told(sat: Saturation) -> str:
        return conclude([record(0, 100, 80.0, ("client-bound",), saturation=sat)]).text

    assert told(dropping(stalled=0)).endswith("; raise concurrency.")  # every drop waited in vain for a user
    assert "raise concurrency" not in told(dropping(stalled=280))  # the process did not run: users were free
    assert "add workers" not in told(dropping(stalled=0))  # the process did not use its core
    assert told(dropping(stalled=280, cpu=0.97)).endswith("; add workers or processes.")


def test_a_slight_shortfall_with_nothing_throttled_shows_the_table_took_what_was_sent() -> None:
    slight = Saturation(True, ("lag", "dropped"), 0.15, 0.2, 30, 0, cpu_seconds=15.0, late=120, late_bound=0.05,
                        due=1500, sent=1478, stalled=30, cpu_wait=0.1)  # fmt: skip
    windows = [record(0, 50, 50.0, ("ok",))] + [
        record(i, 50 + 50 * i, 50.0 + 49 * i, ("ok", "client-bound"), stronger="service", saturation=slight)
        for i in (1, 2, 3)
    ]
    c = conclude(windows)
    assert "Windows 2-4 are client-bound by a small margin (lag, dropped;" in c.text
    assert "but sent 98.5% of the sends due and DynamoDB throttled none: the table took what was sent" in c.text
    assert "DynamoDB accepted the load offered, up to 200.0/s (window 4), without throttling." in c.text
    assert "cannot tell" not in c.text


def test_a_stated_cap_is_never_followed_by_cannot_tell() -> None:
    """The issue's conclusion said both "capped at 120.6/s from window 3" and "cannot tell above 98.3/s"."""
    starved = Saturation(True, ("dropped",), 0.3, 0.1, 400, 0, cpu_seconds=15.0, late_bound=0.05, due=1500,
                         sent=1100)  # fmt: skip
    windows = [
        record(0, 50, 50.0, ("ok",)),
        record(1, 100, 98.3, ("client-bound",), saturation=starved),
        record(2, 150, 120.6, ("throttled",)),
        record(3, 200, 120.6, ("throttled",)),
    ]
    c = conclude(windows)
    assert "DynamoDB capped accepted requests at 120.6/s from window 3 on" in c.text
    assert "Window 2 is client-bound (dropped; 400 of 1,500 sends dropped): it is not used for the ceiling" in c.text
    assert "cannot tell" not in c.text


def test_a_run_with_no_judged_window_says_so() -> None:
    starved = Saturation(True, ("dropped",), 0.3, 0.1, 400, 0, cpu_seconds=15.0, due=1500, sent=1100)
    c = conclude([record(i, 100, 70.0, ("client-bound",), saturation=starved) for i in range(4)])
    assert c.text.startswith("No window could be judged: nothing can be concluded about DynamoDB's limit.")
