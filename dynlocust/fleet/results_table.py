"""Results out of band: the master puts each results record as an item in a small table; the launcher polls it.

A long run must not hang on one silent connection between the launcher and the fleet, so the master writes every
record it writes to its results file (`run`, each closed `window`, `end`) to the run's results table too,
and `dynlocust ecs run` queries that table for items past the last one it has seen.

Item layout (table key: `run_id` S, `seq` N): `seq` is 0 for the run record, window index + 1 for a window
and `END_SEQ` for the end, so one Query returns the records in order; `type` is the record type and `body`
the record as zlib-compressed JSON (a window with its histograms stays far below the 400 KB item limit).

Where the table is (`ResultsTable`) is a setting: `--results-table` (`DYNLOCUST_RESULTS_TABLE`, set in the master's
task definition on ECS) and `--results-endpoint` (`DYNLOCUST_RESULTS_ENDPOINT`), in the run's `--region`.
"""

from __future__ import annotations

import json
import logging
import os
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dynlocust.errors import DynlocustError
from dynlocust.run.results import ResultsWriter

END_SEQ = 1_000_000_000
MAX_BODY_BYTES = 350_000

log = logging.getLogger(__name__)


class ResultsTableError(DynlocustError):
    """A results item that cannot be written or read back as a results record."""


@dataclass(frozen=True)
class ResultsTable:
    """The table the master publishes its results records to (`name` "": none, the results file alone)."""

    name: str = ""
    region: str = ""
    """The run's region ("": botocore's own default)."""
    endpoint: str = ""
    """The endpoint URL ("": AWS's own for `region`)."""


def seq_of(record: Mapping[str, Any]) -> int:
    """The sort key of a record: run 0, window index + 1, end `END_SEQ`."""
    kind = record.get("type")
    if kind == "run":
        return 0
    if kind == "window":
        return int(record["index"]) + 1
    if kind == "end":
        return END_SEQ
    raise ResultsTableError(f"results record: expected type run, window or end, found {kind!r}")


def item_for(run_id: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """The DynamoDB item (attribute values) that holds one results record."""
    body = zlib.compress(json.dumps(record, separators=(",", ":"), allow_nan=False).encode(), 6)
    if len(body) > MAX_BODY_BYTES:
        raise ResultsTableError(
            f"results record {record.get('type')} of run {run_id}: expected at most {MAX_BODY_BYTES} compressed "
            f"bytes, found {len(body)}"
        )
    return {
        "run_id": {"S": run_id},
        "seq": {"N": str(seq_of(record))},
        "type": {"S": str(record["type"])},
        "body": {"B": body},
    }


def record_of(item: Mapping[str, Any]) -> dict[str, Any]:
    """The results record an item holds (inverse of `item_for`)."""
    try:
        record = json.loads(zlib.decompress(item["body"]["B"]))
    except (KeyError, zlib.error, ValueError) as exc:
        raise ResultsTableError(
            f"results item seq {item.get('seq')}: expected a zlib-compressed JSON body, found {exc!r}"
        ) from exc
    if not isinstance(record, dict):
        raise ResultsTableError(f"results item seq {item.get('seq')}: expected a JSON object, found {type(record)}")
    return record


def publish_record(client: Any, table: str, run_id: str, record: Mapping[str, Any]) -> None:
    """Put one record (run, window or end) into the run's results table; a re-put of the same record is harmless."""
    client.put_item(TableName=table, Item=item_for(run_id, record))


publish_window = publish_record


def read_records(client: Any, table: str, run_id: str, after_seq: int = -1) -> list[tuple[int, dict[str, Any]]]:
    """Records of `run_id` with a seq above `after_seq`, in order, as (seq, record) pairs."""
    out: list[tuple[int, dict[str, Any]]] = []
    kwargs: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": "run_id = :r AND seq > :s",
        "ExpressionAttributeValues": {":r": {"S": run_id}, ":s": {"N": str(after_seq)}},
        "ConsistentRead": True,
    }
    while True:
        page = client.query(**kwargs)
        out.extend((int(item["seq"]["N"]), record_of(item)) for item in page.get("Items", []))
        if "LastEvaluatedKey" not in page:
            return out
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


class PublishingResultsWriter(ResultsWriter):
    """A `ResultsWriter` that also publishes every record to the results table.

    The local file stays the record of truth: a failed put is logged and the run goes on (the launcher then
    reports the gap), because losing the run over a progress channel would be worse.
    """

    def __init__(
        self, path: str | os.PathLike[str], client: Any, table: str, run_id: str, *, exclusive: bool = False
    ) -> None:
        super().__init__(path, exclusive=exclusive)
        self.client = client
        self.table = table
        self.run_id = run_id
        self.failures = 0

    def write(self, record: Mapping[str, Any]) -> None:
        super().write(record)
        try:
            publish_record(self.client, self.table, self.run_id, record)
        except Exception as exc:  # any failure of the side channel must not stop the run
            self.failures += 1
            log.warning("results table %s: could not publish the %s record: %s", self.table, record.get("type"), exc)


def results_writer(
    path: str | os.PathLike[str], run_id: str, table: ResultsTable | None = None, *, exclusive: bool = False
) -> ResultsWriter:
    """The master's results writer: publishing to `table` when it has a name (on ECS), a plain one otherwise;
    `exclusive`: `path` must not exist yet (see `ResultsWriter`)."""
    if table is None or not table.name:
        return ResultsWriter(path, exclusive=exclusive)
    import boto3
    from botocore.config import Config

    # PutItem of the same (run_id, seq) is idempotent, so a few retries here cannot count anything twice.
    config = Config(retries={"mode": "standard", "total_max_attempts": 3}, connect_timeout=3, read_timeout=5)
    client = boto3.client(
        "dynamodb", region_name=table.region or None, endpoint_url=table.endpoint or None, config=config
    )
    return PublishingResultsWriter(Path(path), client, table.name, run_id, exclusive=exclusive)
