"""The verdict on a window: what limited it, decided once when it closes.

The noun here is a *verdict*: `Verdict` (its labels, strongest evidence first, and the evidence), decided by
`verdict` from the window's tally (`dynlocust.run.tally`) and the client's saturation
(`dynlocust.run.saturation`); every view renders it, none decides again.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dynlocust.request.outcomes import UNPROCESSED
from dynlocust.run.saturation import Saturation
from dynlocust.run.tally import WindowError, WindowStats

VERDICTS = ("ok", "throttled", "client-bound", "errors", "partial", "not-run")

SENT_TOLERANCE = 0.05
"""A window whose client fell short of its due sends by at most this fraction still measured the table.

The shortfall changes the answer only when it could hide or fake DynamoDB's limit: with nothing throttled, a
window that sent 95% of its due sends shows that the table took 95% of the step's rate, where a ramp's steps lie
25-100% apart (the quickstart's 50-200/s in steps of 50). Measured with other work running on 2 cores, quickstart
windows sent 98.9-100% of their due sends (those flagged client-bound in the runs behind this rule: 98-98.6%),
while a generator that is the limit sends far fewer: concurrency 1 at 3,000/s 4%, a CPU hog in the process 37-48%,
the quickstart pinned beside three busier loops 65.7% at 200/s. With throttles, a shortfall within it leaves
DynamoDB's refusals the stronger evidence whatever their share (docs/verdicts.md)."""

PARTIAL_RAN = 0.9
"""A partial window that ran this much of its schedule still measured the service (a late start, a short stop)."""


@dataclass(frozen=True)
class Verdict:
    """What limited a window, decided once when it closes; every view renders it, none decides again.

    `labels` holds every verdict that applies, the stronger evidence first (`labels[0]` is *the* verdict):
    a window can be `throttled` and `client-bound` at once, and `stronger` then says which side's evidence
    weighs more (`service` or `client`). `ran` is the fraction of the window's schedule that came due before
    it closed; `reasons` and `workers` are the client's (see `dynlocust.run.saturation`).
    """

    labels: tuple[str, ...]
    ran: float = 1.0
    stronger: str | None = None
    reasons: tuple[str, ...] = ()
    workers: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        return self.labels[0]

    @property
    def judged(self) -> bool:
        """Whether the window says something about the service: its strongest verdict is the service's (`ok`,
        `throttled`, `errors`), or it is `partial` having run at least `PARTIAL_RAN` of its schedule."""
        if self.label == "partial":
            return self.ran >= PARTIAL_RAN
        return self.label not in ("client-bound", "not-run")

    @property
    def ran_text(self) -> str:
        """`ran` as a percentage rounded down, so a window short of one send never reads 100%."""
        return f"{math.floor(self.ran * 1000) / 10:g}%"

    def to_dict(self) -> dict[str, Any]:
        return {
            "labels": list(self.labels),
            "ran": self.ran,
            "stronger": self.stronger,
            "reasons": list(self.reasons),
            "workers": list(self.workers),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Verdict:
        labels = tuple(str(v) for v in d["labels"])
        if not labels or any(v not in VERDICTS for v in labels):
            raise WindowError(f"verdict: expected labels from {VERDICTS}, found {list(labels)}")
        return cls(
            labels=labels,
            ran=float(d.get("ran", 1.0)),
            stronger=d.get("stronger"),
            reasons=tuple(str(r) for r in d.get("reasons", ())),
            workers=tuple(int(w) for w in d.get("workers", ())),
        )

    @classmethod
    def of_record(cls, record: Mapping[str, Any]) -> Verdict:
        """The verdict a window record carries; records written before `verdict_detail` give their label."""
        detail = record.get("verdict_detail")
        if detail is not None:
            return cls.from_dict(detail)
        label = str(record.get("verdict", "partial"))
        sat = record.get("saturation") or {}
        return cls(
            labels=(label if label in VERDICTS else "partial",),
            reasons=tuple(sat.get("reasons", ())) if label == "client-bound" else (),
        )


def verdict(
    stats: WindowStats | None,
    saturation: Saturation,
    *,
    planned: int | None = None,
    error_fraction: float = 0.01,
) -> Verdict:
    """Say what limited a window (`stats` None: nobody observed it). `planned` is the fleet's scheduled count
    (default: the window's own offered count). In this order:

    - `not-run`: nothing of the window's schedule came due (the run stopped before it, or nobody reported it);
    - `partial`: only part of it ran (stopped early, a worker lost or late): never judged `client-bound`,
      since its CPU and lag were measured over a fraction of it; throttles or errors seen are listed after it;
    - otherwise the service's side, `errors` (test failures reach `error_fraction` of sent requests and
      outnumber the throttle signals) or `throttled` (at least one throttled request or unprocessed batch), and
      the client's side, `client-bound` (`saturation.client_bound`), the stronger evidence first: the client's
      is the fraction of due sends that never went out (`Saturation.shortfall`), the service's the fraction of
      sent requests it refused (or failed). Throttles with a healthy client mean DynamoDB said no, and so do
      throttles with a shortfall within `SENT_TOLERANCE`;
    - `ok`: none of the above, or `ok` then `client-bound` when the client fell short by at most
      `SENT_TOLERANCE` and DynamoDB throttled nothing: the table took what was sent.
    """
    if stats is None:
        return Verdict(("not-run",), ran=0.0)
    scheduled = stats.total().offered if planned is None else planned
    due = stats.handed + stats.dropped
    ran = min(1.0, due / scheduled) if scheduled else (0.0 if stats.partial else 1.0)
    t = stats.total()
    throttle_signals = t.throttled + t.by_kind.get(UNPROCESSED, 0)
    sent = t.sent
    service: str | None = None
    if sent and t.errors >= error_fraction * sent and t.errors > throttle_signals:
        service = "errors"
    elif throttle_signals > 0 or t.unprocessed_items > 0:
        service = "throttled"
    if stats.partial or ran < 1.0:
        if due == 0 and sent == 0:
            return Verdict(("not-run",), ran=0.0)
        return Verdict(("partial",) if service is None else ("partial", service), ran=ran)
    client = saturation.client_bound and saturation.judged
    reasons, workers = (saturation.reasons, saturation.workers) if client else ((), ())
    slight = saturation.shortfall <= SENT_TOLERANCE
    if service is None:
        if client and slight:
            return Verdict(("ok", "client-bound"), stronger="service", reasons=reasons, workers=workers)
        return Verdict(("client-bound",) if client else ("ok",), reasons=reasons, workers=workers)
    if not client:
        return Verdict((service,))
    refused = (t.errors if service == "errors" else throttle_signals) / sent if sent else 0.0
    if not slight and saturation.shortfall > refused:
        return Verdict(("client-bound", service), stronger="client", reasons=reasons, workers=workers)
    return Verdict((service, "client-bound"), stronger="service", reasons=reasons, workers=workers)
