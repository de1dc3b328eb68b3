"""What a run found, in words: which side was the limit, at what rate, and the windows that says so.

A pure function of the closed window records (as `FleetMerge` writes them to `results.jsonl`), so the console,
the results file's `end` record and `dynlocust report` say the same thing; it decides nothing of its own beyond
the summary: each window's verdict and evidence were decided when it closed (`dynlocust.run.verdict.verdict`).
Throttles with a known why (a shared budget full of the other kind, an index's limit) get a sentence each
(`dynlocust.observe.throttle_causes`), so a user reading "reads throttled" learns whether reads are the problem.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from dynlocust.observe import endpoint_lost
from dynlocust.observe.throttle_causes import explain
from dynlocust.run.saturation import REASONS, Saturation
from dynlocust.run.verdict import Verdict
from dynlocust.scenario.plan import window_list as window_list  # numbered from 1; its views import them here
from dynlocust.scenario.plan import window_number as window_number

QUIETER = "run it on a quieter machine or with fewer processes"
MORE_CPU = "add workers or processes"
MORE_USERS = "raise concurrency"
BIGGER_POOL = "raise --pool-size"
LAG_ALONE = "find what stalled the process (another process, a full disk, swapping)"
"""`lag` with no CPU used up, no CPU wait measured and no user short: the process stopped for a reason of its own."""


def advice(sat: Saturation | None, reasons: Sequence[str]) -> list[str]:
    """What to change for a client-bound window with `reasons` and the evidence `sat` (None: a record written
    before the evidence was kept). Each is advised only on its evidence: more users only when the users were
    all busy (drops that waited in vain for one, `Saturation.users_busy`), more processes only when this one used
    its core, a quieter machine when the process waited for a CPU that others held."""
    found = [
        text
        for reason, text in (("machine-busy", QUIETER), ("cpu", MORE_CPU), ("pool", BIGGER_POOL))
        if reason in reasons
    ]
    short = {"dropped", "offered-short"} & set(reasons)
    # on a busy machine users held up by a starved process (or a starved local endpoint) would only queue
    if short and "machine-busy" not in reasons and (sat is None or sat.users_busy):
        found.append(MORE_USERS)
    return found or ([LAG_ALONE] if short or "lag" in reasons else [])


@dataclass(frozen=True)
class Conclusion:
    """The run's finding: `text` for people, the window indexes it rests on for programs."""

    text: str
    service_limited: tuple[int, ...]
    client_limited: tuple[int, ...]
    errors: tuple[int, ...]
    incomplete: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Conclusion:
        windows = {k: tuple(int(i) for i in d.get(k, ())) for k in ("service_limited", "client_limited", "errors")}
        return cls(text=str(d.get("text", "")), incomplete=tuple(int(i) for i in d.get("incomplete", ())), **windows)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _rate(v: float) -> str:
    return f"{v:,.1f}/s"


def evidence(sat: Saturation, reasons: Sequence[str]) -> str:
    """The figures behind `reasons`, e.g. `CPU 0.97 of a core, 40 of 1,500 sends late by > 25 ms`.

    Records written before due sends and late counts were kept (`due` 0) give the figures they have.
    """
    of_due = f" of {sat.due:,}" if sat.due else ""
    parts = []
    for reason in reasons:
        if reason == "cpu":
            parts.append(f"CPU {sat.cpu:.2f} of a core")
        elif reason == "machine-busy" and sat.cpu_wait is not None:
            parts.append(wait_text(sat) + " while other processes held the cores")
        elif reason == "lag" and sat.late_bound:
            stalled = f" ({sat.stalled:,} unseen until too late: the process did not run)" if sat.stalled else ""
            parts.append(f"{sat.late:,}{of_due} sends late by > {sat.late_bound * 1000:.0f} ms{stalled}")
        elif reason == "lag":
            parts.append(f"schedule lag p99 {sat.lag_p99 * 1000:.0f} ms")
        elif reason == "dropped":
            parts.append(f"{sat.dropped:,}{of_due} sends dropped")
        elif reason == "pool":
            parts.append(f"{sat.pool_waits:,} waits for a pooled connection")
        elif reason == "offered-short" and sat.due:
            parts.append(f"{sat.sent:,} of {sat.due:,} due sends went out")
    return ", ".join(parts)


def wait_text(sat: Saturation) -> str:
    """`this process waited 3.2 s of 15 s for a CPU` (and the machine's pressure when measured)."""
    text = f"this process waited {sat.cpu_wait or 0.0:.1f} s of {sat.cpu_seconds:.3g} s for a CPU"
    if sat.cpu_pressure is not None:
        text += f" (on the machine, some task waited {sat.cpu_pressure:.1f} s)"
    return text


def sent_text(sats: Sequence[Saturation]) -> str:
    """The share of due sends that went out, `98.7%` or `97.9-99.1%` over several windows, rounded down."""
    shares = sorted(math.floor(1000 * s.sent / s.due) / 10 for s in sats if s.due)
    if not shares:
        return "nearly all"
    return f"{shares[0]:g}%" if shares[0] == shares[-1] else f"{shares[0]:g}-{shares[-1]:g}%"


REACHED = 0.9
"""A throttled window *reached* the ceiling when it accepted at least this share of the most any throttled window
accepted: windows at the ceiling sit within a few percent of noise of each other, while one that throttled
accepting far less (early in a ramp, a burst on a cold partition) did not reach it and must not be named."""


def at_ceiling(accepted: Mapping[int, float]) -> list[int]:
    """The throttled windows (indexes, in order) whose accepted rate reached the ceiling; the ceiling reported is
    their median and the conclusion names the first of them, so it agrees with the table's figures."""
    top = max(accepted.values(), default=0.0)
    return sorted(i for i, rate in accepted.items() if rate >= REACHED * top)


def conclude(records: Sequence[Mapping[str, Any]]) -> Conclusion:
    """The conclusion of a run from its closed window records (merged ones, as in `results.jsonl`)."""
    windows = sorted(records, key=lambda r: int(r["index"]))
    verdicts = {int(r["index"]): Verdict.of_record(r) for r in windows}
    by_index = {int(r["index"]): r for r in windows}
    incomplete = [i for i, v in verdicts.items() if v.label in ("partial", "not-run")]
    judged = [i for i in verdicts if i not in incomplete]
    service = [i for i in judged if "throttled" in verdicts[i].labels and verdicts[i].stronger != "client"]
    client = [i for i in judged if "client-bound" in verdicts[i].labels]
    client_first = [i for i in client if verdicts[i].stronger != "service"]
    took = [i for i in client if verdicts[i].label == "ok"]  # a slight shortfall, nothing throttled
    outweighed = [i for i in client if i not in client_first and i not in took]
    errors = [i for i in judged if "errors" in verdicts[i].labels]
    sentences: list[str] = []

    def summary(i: int) -> Mapping[str, Any]:
        return by_index[i].get("summary") or {}

    def saturation(i: int) -> Saturation | None:
        found = by_index[i].get("saturation")
        return Saturation.from_dict(found) if found else None

    def todo_for(indexes: Sequence[int]) -> list[str]:
        """The advice for `indexes`, each once, in the order `advice` gives it."""
        todo: list[str] = []
        for i in indexes:
            todo += [a for a in advice(saturation(i), verdicts[i].reasons) if a not in todo]
        return todo

    def describe_client(indexes: Sequence[int]) -> str:
        """The reasons of `indexes`, the figures of the one with the strongest evidence, and the workers; a reason
        that window lacks gets its figures from the strongest window that has it, so none is named bare."""
        sats = {i: sat for i in indexes if (sat := saturation(i)) is not None}

        def strongest(among: Iterable[int]) -> int:
            return max(among, key=lambda i: (sats[i].shortfall, sats[i].cpu))

        worst = strongest(sats) if sats else indexes[0]
        reasons = [r for r in REASONS if any(r in verdicts[i].reasons for i in indexes)]
        shown: dict[int, list[str]] = {worst: list(verdicts[worst].reasons)} if worst in sats else {}
        for reason in reasons:
            having = [i for i in sats if reason in verdicts[i].reasons]
            if having and worst not in having:
                shown.setdefault(strongest(having), []).append(reason)
        text = ", ".join(reasons) or "client-bound"
        for i, its in shown.items():
            if figures := evidence(sats[i], its):
                text += f"; {'' if len(indexes) == 1 else f'window {window_number(i)}: '}{figures}"
        workers = sorted({w for i in indexes for w in verdicts[i].workers})
        if workers:
            text += f"; on worker {', '.join(map(str, workers))}"
        return text

    if service:
        rates = {i: float(summary(i).get("accepted_per_s") or 0.0) for i in service}
        capped = at_ceiling(rates)
        ceiling = statistics.median(rates[i] for i in capped)
        targets = [float(summary(i).get("target_rate") or 0.0) for i in capped]
        tail = judged[judged.index(capped[0]) :]
        where = (
            f"from window {window_number(capped[0])} on"
            if capped == tail and len(capped) > 1
            else f"in {window_list(capped)}"
        )
        offered = _rate(targets[0]) if min(targets) == max(targets) else f"{min(targets):,.0f}-{max(targets):,.0f}/s"
        sentence = f"DynamoDB capped accepted requests at {_rate(ceiling)} {where} (offered {offered})"
        below = [i for i in service if i not in capped]
        if below:
            sentence += (
                f"; it throttled already in {window_list(below)}, "
                f"below the ceiling ({', '.join(_rate(rates[i]) for i in below)} accepted)"
            )
        if not client:
            sentence += "; the client was not the limit"
        elif outweighed:
            todo = todo_for(outweighed)
            sentence += (
                f"; the client was also limited in {window_list(outweighed)} ({describe_client(outweighed)}), "
                "but DynamoDB's refusals outweigh that"
                + (f"; to rule the client out, {' or '.join(todo)}" if todo else "")
            )
        sentences.append(sentence + ".")
    for why in explain([by_index[i] for i in judged]):
        sentences.append(f"{_sentence(why.text)} ({why.count} in {window_list(why.windows)}).")
    if took:
        verb = "is" if len(took) == 1 else "are"
        sats = [sat for i in took if (sat := saturation(i)) is not None]
        todo = todo_for(took)
        sentences.append(
            f"{_sentence(window_list(took))} {verb} client-bound by a small margin ({describe_client(took)}), "
            f"but sent {sent_text(sats)} of the sends due and DynamoDB throttled none: the table took what was sent"
            + (f"; {' or '.join(todo)}" if todo else "")
            + "."
        )
    if client_first:
        best = max(summary(i).get("accepted_per_s") or 0.0 for i in client_first)
        verb = "is" if len(client_first) == 1 else "are"
        # with a ceiling stated, these windows only go unused: "cannot tell above X" would contradict it
        unknown = (
            f"{'it is' if len(client_first) == 1 else 'they are'} not used for the ceiling"
            if service
            else f"the run cannot tell where DynamoDB's limit is above {_rate(best)}"
        )
        todo = todo_for(client_first)
        sentences.append(
            f"{_sentence(window_list(client_first))} {verb} client-bound ({describe_client(client_first)}): "
            + unknown
            + (f"; {' or '.join(todo)}" if todo else "")
            + "."
        )
    if errors:
        sentences.append(f"{_sentence(window_list(errors))} failed mostly with errors: the test, not DynamoDB, failed.")
    lost = endpoint_lost.sentence(windows)
    if lost is not None:  # a clause of its own: when the endpoint stopped answering, and how
        sentences.append(lost)
    if judged and not service and not errors and not client_first:
        top = max(judged, key=lambda i: float(summary(i).get("target_rate") or 0.0))
        sentences.append(
            f"DynamoDB accepted the load offered, up to {_rate(float(summary(top).get('target_rate') or 0.0))} "
            f"(window {window_number(top)}), without throttling"
            + ("; the client was not the limit." if not client else ".")
        )
    if incomplete:
        not_run = [i for i in incomplete if verdicts[i].label == "not-run"]
        partial = [i for i in incomplete if verdicts[i].label == "partial"]
        parts = [f"{window_list(not_run)} did not run"] if not_run else []
        parts += [f"window {window_number(i)} ran {verdicts[i].ran_text} of its schedule" for i in partial]
        sentences.append(_sentence("; ".join(parts)) + ": they are not judged.")
    if not judged:
        sentences.insert(0, "No window ran in full: nothing can be concluded about DynamoDB's limit.")
    elif not any(verdicts[i].judged for i in judged):
        sentences.insert(0, "No window could be judged: nothing can be concluded about DynamoDB's limit.")
    return Conclusion(
        text=" ".join(sentences),
        service_limited=tuple(service),
        client_limited=tuple(client),
        errors=tuple(errors),
        incomplete=tuple(incomplete),
    )
