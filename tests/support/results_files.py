"""Results files written through dynlocust's own writer from known numbers, for tests of what reads them."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynlocust.run.results import ResultsWriter
from dynlocust.run.tally import WindowStats
from tests.support.tally import count_outcome

SHAPE: dict[str, Any] = {
    "tables": [{"name": "t", "partition_key": {"name": "pk", "type": "S"}, "billing": "on_demand"}],
    "workload": {"item_size": 200, "operations": [{"op": "put", "weight": 1.0, "table": "t"}]},
}


@dataclass
class Window:
    """One window of `rate`/s over `seconds` (bins of 1 s): every request accepted except `throttled` ones."""

    phase: str
    rate: float
    latency: float = 0.002
    """Median latency in seconds (log-normal spread around it)."""
    throttled: int = 0
    verdict: str = "ok"
    also: tuple[str, ...] = ()
    """Verdicts that apply besides `verdict` (written as the record's ``verdict_detail``)."""
    seconds: int = 5
    seed: int = 0
    units: float = 1.0
    """Write units each accepted request consumed."""
    operations: tuple[str, ...] = ()
    """Operation labels the requests take in turn (none: the records name no operation, as older results)."""
    slower: dict[str, float] | None = None
    """Latency factor per operation label (an operation made slower on purpose)."""


def write_results(
    path: Path, windows: list[Window], *, shape: dict[str, Any] | None = SHAPE, end: bool = True, t0: float = 1e9
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    planned = []
    start = t0
    with ResultsWriter(path) as writer:
        records = []
        for index, w in enumerate(windows):
            planned.append({"index": index, "start": start, "duration": w.seconds, "rate": w.rate, "phase": w.phase})
            n = int(w.rate * w.seconds)
            stats = WindowStats(
                index, start, w.seconds, target_rate=w.rate, bin_seconds=1.0, offered_per_bin=[int(w.rate)] * w.seconds
            )
            rng = random.Random(w.seed * 1000 + index)
            throttled = {int((k + 1) * n / (w.throttled + 1)) for k in range(w.throttled)}  # spread evenly
            for i in range(n):
                at = start + i / w.rate
                kind = "throttled" if i in throttled else "ok"
                op = w.operations[i % len(w.operations)] if w.operations else None
                lat = w.latency * rng.lognormvariate(0, 0.3) * (w.slower or {}).get(op or "", 1.0)
                units = w.units if kind == "ok" else 0.0
                count_outcome(
                    stats, at=at, kind=kind, latency=lat, latency_from_intended=lat, write_units=units, operation=op
                )
            record = stats.to_dict()
            record.update(phase=w.phase, verdict=w.verdict, workers={"0": {}}, missing_workers=[])
            if w.also:
                record["verdict_detail"] = {"labels": [w.verdict, *w.also]}
            records.append(record)
            start += w.seconds
        run: dict[str, Any] = {"scenario": "known", "source": "known.yaml", "t0": t0, "worker_count": 1}
        if shape is not None:
            run["shape"] = shape
        writer.write_run(windows=planned, run_id=path.parent.name, **run)
        for record in records:
            writer.write_window(**record)
        if end:
            writer.write_end(exit_code=0, abort_reason=None, lost_workers=[])
    return path
