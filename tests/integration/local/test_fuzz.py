"""A fuzzer of the JSON API (issue 29): requests generated from botocore's service model, sent to a real endpoint.

Each batch starts from the same fixture tables and sends the requests of one seed (tests/support/fuzz.py) over
HTTP to a `dynlocust local` process. It asserts that no answer is an HTTP 500, that no request took more than
100 ms of the server's CPU (the endpoint measures it itself: other processes' load does not count), and that
afterwards every table still answers DescribeTable, Scan and GetItem. Bounded for CI by a request count and a
time budget; run longer by hand with, for example:

    DYNLOCUST_FUZZ_SECONDS=600 DYNLOCUST_FUZZ_REQUESTS=100000000 DYNLOCUST_FUZZ_SEED=1000 \\
        python -m pytest -x -q -p no:cacheprovider tests/integration/local/test_fuzz.py -k budget

A seed that failed goes into REGRESSION_SEEDS with what it found, and is replayed alone from then on.
"""

from __future__ import annotations

import http.client
import json
import os
import time
from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from dynlocust.local.api import OPERATIONS
from dynlocust.local.embedded import LocalEndpoint
from tests.support.fuzz import Generator, GrammarGenerator, fixture_requests, reads_of_grown_items, service_model

TARGET = "DynamoDB_20120810."
BATCH = 250
MAX_CPU_SECONDS = 0.1
REQUESTS = int(os.environ.get("DYNLOCUST_FUZZ_REQUESTS", "3000"))
SECONDS = float(os.environ.get("DYNLOCUST_FUZZ_SECONDS", "30"))
FIRST_SEED = int(os.environ.get("DYNLOCUST_FUZZ_SEED", "0"))
# issue 41: the grammar's stream (PartiQL statements and growing updates) has its own budget, in the same variables
# with a GRAMMAR_ prefix (DYNLOCUST_FUZZ_GRAMMAR_REQUESTS, DYNLOCUST_FUZZ_GRAMMAR_SECONDS)
GRAMMAR_REQUESTS = int(os.environ.get("DYNLOCUST_FUZZ_GRAMMAR_REQUESTS", "1500"))
GRAMMAR_SECONDS = float(os.environ.get("DYNLOCUST_FUZZ_GRAMMAR_SECONDS", "20"))
# seeds that once found a defect, and what it was (against main before issue 29's endpoint fixes; a change to the
# generator changes what a seed sends, so keep these with the generator that found them); each is replayed alone
_HALF_DEFINITION = "UpdateTable with an AttributeDefinition lacking AttributeType: HTTP 500, and stored"
_TAG = "TagResource with a tag lacking Key or Value: HTTP 500 (KeyError)"
REGRESSION_SEEDS: list[tuple[int, str]] = [
    (0, _HALF_DEFINITION),
    (8, f"{_HALF_DEFINITION}; {_TAG}"),
    (9, _TAG),
    (12, _HALF_DEFINITION),
    (13, _HALF_DEFINITION),
    (14, _TAG),
    (19, _HALF_DEFINITION),
    (29, _HALF_DEFINITION),
]
THROTTLES = ("ThrottlingException", "ProvisionedThroughputExceededException", "RequestLimitExceeded")
SAMPLE_VALUES = {"S": {"S": "a"}, "N": {"N": "1"}, "B": {"B": "YQ=="}}


class Client:
    """One keep-alive connection to the endpoint, reopened when the server closes it (a 413, a timeout)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def call(self, op: str, req: Any) -> tuple[int, Any]:
        body = json.dumps(req).encode()
        headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": TARGET + op}
        for attempt in (1, 2):
            try:
                self.conn.request("POST", "/", body=body, headers=headers)
                resp = self.conn.getresponse()
                data = resp.read()
                if resp.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                return resp.status, json.loads(data) if data[:1] == b"{" else data
            except (ConnectionError, http.client.HTTPException):
                self.conn.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.conn.close()


@pytest.fixture(scope="module")
def endpoint() -> Iterator[LocalEndpoint]:
    with LocalEndpoint() as ep:  # capacity emulation on, as `dynlocust local` runs by default
        yield ep


def operations() -> list[str]:
    return [op for op in service_model().operation_names if op in OPERATIONS]


def reset(client: Client) -> list[str]:
    """Delete every table (after lifting deletion protection), then create the fixture tables; returns what
    failed (a table that can no longer be updated or deleted is a finding too)."""
    problems = []
    for name in table_names(client):
        client.call("UpdateTable", {"TableName": name, "DeletionProtectionEnabled": False})
        status, body = client.call("DeleteTable", {"TableName": name})
        if status != 200:
            problems.append(f"DeleteTable {name} in the reset: {status} {body}")
    for op, req in fixture_requests():
        status, body = client.call(op, req)
        if status != 200:
            problems.append(f"CreateTable {req['TableName']} in the reset: {status} {body}")
    return problems


def table_names(client: Client) -> list[str]:
    names: list[str] = []
    start: dict[str, Any] = {}
    while True:
        status, body = client.call("ListTables", start)
        assert status == 200, body
        names += body["TableNames"]
        if "LastEvaluatedTableName" not in body:
            return names
        start = {"ExclusiveStartTableName": body["LastEvaluatedTableName"]}


def answered(status: int, body: Any) -> bool:
    """A table that answers: 200, or a throttle (the capacity emulation may refuse a read, which is an answer)."""
    return status == 200 or (status == 400 and body.get("__type", "").split("#")[-1] in THROTTLES)


def unreadable(client: Client) -> list[str]:
    """Every table still answers DescribeTable, Scan and GetItem (of a key of its schema's types)."""
    problems = []
    for name in table_names(client):
        status, desc = client.call("DescribeTable", {"TableName": name})
        if status != 200:
            problems.append(f"DescribeTable {name}: {status} {desc}")
            continue
        table = desc["Table"]
        status, body = client.call("Scan", {"TableName": name, "Limit": 100})
        if not answered(status, body):
            problems.append(f"Scan {name}: {status} {body}")
        types = {d.get("AttributeName"): d.get("AttributeType") for d in table["AttributeDefinitions"]}
        kinds = [types.get(el["AttributeName"]) for el in table["KeySchema"]]
        if not all(k in SAMPLE_VALUES for k in kinds):
            problems.append(f"DescribeTable {name}: key attribute types {kinds} in {table['AttributeDefinitions']}")
            continue
        key = {el["AttributeName"]: SAMPLE_VALUES[str(k)] for el, k in zip(table["KeySchema"], kinds, strict=True)}
        status, body = client.call("GetItem", {"TableName": name, "Key": key})
        if not answered(status, body):
            problems.append(f"GetItem {name} {key}: {status} {body}")
    return problems


def run_batch(endpoint: LocalEndpoint, seed: int, count: int = BATCH) -> tuple[list[str], int, int]:
    """Send one seed's requests from the fixture state; see send_batch."""
    gen = Generator(seed, operations())
    return send_batch(endpoint, f"seed {seed}", (gen.request() for _ in range(count)))


def run_grammar_batch(endpoint: LocalEndpoint, seed: int, count: int = BATCH) -> tuple[list[str], int, int]:
    """One seed of GrammarGenerator's requests, then every read of the items it grew; see send_batch."""
    gen = GrammarGenerator(seed)
    requests = [gen.request() for _ in range(count)] + reads_of_grown_items()
    return send_batch(endpoint, f"grammar seed {seed}", requests)


def send_batch(
    endpoint: LocalEndpoint, label: str, requests: Iterable[tuple[str, dict[str, Any]]]
) -> tuple[list[str], int, int]:
    """Send `requests` from the fixture state; returns (what went wrong, requests sent, answers of HTTP 500)."""
    client = Client(endpoint.port)
    try:
        problems = [f"{label}: {p}" for p in reset(client)]
        if problems:
            return problems, 0, 0
        endpoint.reset_stats()
        sent = errors = 0
        for i, (op, req) in enumerate(requests):
            status, body = client.call(op, req)
            sent += 1
            if status >= 500:
                errors += 1
                shown = json.dumps(req)[:600]
                problems.append(f"{label} request {i}: {op} {shown} -> HTTP {status} {body}")
        cpu = endpoint.stats()["max_request_cpu_seconds"]
        if cpu > MAX_CPU_SECONDS:
            problems.append(f"{label}: a request took {cpu * 1000:.0f} ms of server CPU")
        problems += [f"{label}: {p}" for p in unreadable(client)]
        return problems, sent, errors
    finally:
        client.close()


def test_generated_requests_are_well_typed_for_their_operations() -> None:
    """The generator's requests pass botocore's own parameter validation most of the time (they are the model's)."""
    from botocore.validate import ParamValidator

    model = service_model()
    gen = Generator(7, operations())
    valid = 0
    for _ in range(300):
        op, req = gen.request()
        if not ParamValidator().validate(req, model.operation_model(op).input_shape).has_errors():
            valid += 1
    assert valid > 100, valid


def test_fuzz_within_budget(endpoint: LocalEndpoint) -> None:
    deadline = time.monotonic() + SECONDS
    sent = errors = 0
    seed = FIRST_SEED
    problems: list[str] = []
    while sent < REQUESTS and time.monotonic() < deadline:
        found, n, e = run_batch(endpoint, seed)
        problems += found
        sent, errors, seed = sent + n, errors + e, seed + 1
        assert not problems, "\n".join(problems[:20])
    print(f"model fuzz: {sent} requests, {errors} answered 500, seeds {FIRST_SEED}..{seed - 1}")
    assert sent >= BATCH  # at least one batch ran


@pytest.mark.parametrize(("seed", "found"), REGRESSION_SEEDS)
def test_regression_seed(endpoint: LocalEndpoint, seed: int, found: str) -> None:
    problems = run_batch(endpoint, seed)[0]
    assert not problems, f"seed {seed} (once found: {found}):\n" + "\n".join(problems[:20])


def test_fuzz_partiql_grammar_and_growing_items_within_budget(endpoint: LocalEndpoint) -> None:
    """Issue 41: PartiQL from its grammar (nesting and sizes past every bound included) and UpdateItems that grow
    items past 32 levels and 400 KB: no 500, no request over MAX_CPU_SECONDS of server CPU, every grown item
    still read by every read path. Prints the counts (run with -s to see them)."""
    deadline = time.monotonic() + GRAMMAR_SECONDS
    sent = errors = 0
    seed = FIRST_SEED
    problems: list[str] = []
    while sent < GRAMMAR_REQUESTS and time.monotonic() < deadline:
        found, n, e = run_grammar_batch(endpoint, seed)
        problems += found
        sent, errors, seed = sent + n, errors + e, seed + 1
        assert not problems, "\n".join(problems[:20])
    print(f"grammar fuzz: {sent} requests, {errors} answered 500, seeds {FIRST_SEED}..{seed - 1}")
    assert sent >= BATCH
