"""Every row of the outcome model: responses and exceptions in, one Outcome out."""

from __future__ import annotations

import gevent
import pytest
from botocore import exceptions as bex

from dynlocust.request.outcomes import (
    DEADLINE,
    DeadlineExceeded,
    ThrottlingReason,
    classify,
)


def client_error(code: str, status: int = 400, **body: object) -> bex.ClientError:
    """A ClientError shaped as botocore's JSON parser builds it (modelled members merged at top level)."""
    response = {"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}, **body}
    return bex.ClientError(response, "PutItem")


PTE = "ProvisionedThroughputExceededException"
TABLE_ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/t"
INDEX_ARN = TABLE_ARN + "/index/g"

EXCEPTION_ROWS = [
    # (exception, kind, code, http_status)
    (client_error("ThrottlingException"), "throttled", "ThrottlingException", 400),
    (
        client_error("ProvisionedThroughputExceededException"),
        "throttled",
        "ProvisionedThroughputExceededException",
        400,
    ),
    (client_error("RequestLimitExceeded"), "throttled", "RequestLimitExceeded", 400),
    (
        client_error(
            "TransactionCanceledException", CancellationReasons=[{"Code": "None"}, {"Code": "ThrottlingError"}]
        ),
        "throttled",
        "TransactionCanceledException",
        400,
    ),
    (
        client_error("TransactionCanceledException", CancellationReasons=[{"Code": "ProvisionedThroughputExceeded"}]),
        "throttled",
        "TransactionCanceledException",
        400,
    ),
    (
        client_error("TransactionCanceledException", CancellationReasons=[{"Code": "ConditionalCheckFailed"}]),
        "condition_failed",
        "TransactionCanceledException",
        400,
    ),
    (
        client_error("TransactionCanceledException", CancellationReasons=[{"Code": "TransactionConflict"}]),
        "transaction_conflict",
        "TransactionCanceledException",
        400,
    ),
    (
        client_error("TransactionCanceledException", CancellationReasons=[{"Code": "ValidationError"}]),
        "validation",
        "TransactionCanceledException",
        400,
    ),
    (client_error("ConditionalCheckFailedException"), "condition_failed", "ConditionalCheckFailedException", 400),
    (client_error("TransactionConflictException"), "transaction_conflict", "TransactionConflictException", 400),
    (client_error("ValidationException"), "validation", "ValidationException", 400),
    (client_error("ResourceNotFoundException"), "not_found", "ResourceNotFoundException", 400),
    (client_error("UnrecognizedClientException"), "auth", "UnrecognizedClientException", 400),
    (client_error("InvalidSignatureException"), "auth", "InvalidSignatureException", 400),
    (client_error("AccessDeniedException"), "auth", "AccessDeniedException", 400),
    (client_error("InternalServerError", 500), "server_error", "InternalServerError", 500),
    (client_error("ServiceUnavailable", 503), "server_error", "ServiceUnavailable", 503),
    (client_error("SomethingNew"), "error", "SomethingNew", 400),
    (bex.ConnectTimeoutError(endpoint_url="http://127.0.0.1:1"), "timeout", "ConnectTimeout", None),
    (bex.ReadTimeoutError(endpoint_url="http://127.0.0.1:1"), "timeout", "ReadTimeout", None),
    (DeadlineExceeded(8.0), "timeout", DEADLINE, None),
    (gevent.Timeout(1.0), "timeout", DEADLINE, None),
    (bex.EndpointConnectionError(endpoint_url="http://127.0.0.1:1"), "connection", "ConnectionRefused", None),
    (
        bex.ConnectionClosedError(endpoint_url="http://127.0.0.1:1"),
        "connection",
        "ConnectionClosed",
        None,
    ),
    (ConnectionResetError(104, "Connection reset by peer"), "connection", "ConnectionReset", None),
    (bex.NoCredentialsError(), "auth", "NoCredentialsError", None),
    (RuntimeError("boom"), "error", "RuntimeError", None),
]


@pytest.mark.parametrize(("exception", "kind", "code", "status"), EXCEPTION_ROWS)
def test_exception_rows(exception: BaseException, kind: str, code: str, status: int | None) -> None:
    outcome = classify(exception=exception)
    assert (outcome.kind, outcome.code, outcome.http_status) == (kind, code, status)
    assert not outcome.ok


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {"throttlingReasons": [{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": TABLE_ARN}]},
            (ThrottlingReason("TableWriteKeyRangeThroughputExceeded", TABLE_ARN),),
        ),
        (
            {
                "ThrottlingReasons": [
                    {"reason": "IndexReadProvisionedThroughputExceeded", "resource": TABLE_ARN + "/index/g"}
                ]
            },
            (ThrottlingReason("IndexReadProvisionedThroughputExceeded", INDEX_ARN),),
        ),
        ({}, ()),
    ],
)
def test_both_spellings_of_throttling_reasons(body: dict, expected: tuple) -> None:
    outcome = classify(exception=client_error("ThrottlingException", **body))
    assert outcome.reasons == expected


@pytest.mark.parametrize(
    ("reason", "resource", "scope", "access"),
    [
        ("TableWriteKeyRangeThroughputExceeded", TABLE_ARN, "table", "write"),
        ("IndexReadMaxOnDemandThroughputExceeded", TABLE_ARN + "/index/g", "index", "read"),
        ("TableReadAccountLimitExceeded", TABLE_ARN, "table", "read"),
        ("Weird", TABLE_ARN + "/index/g", "index", "unknown"),
    ],
)
def test_reason_scope_and_access(reason: str, resource: str, scope: str, access: str) -> None:
    parsed = ThrottlingReason(reason, resource)
    assert (parsed.scope, parsed.access) == (scope, access)


@pytest.mark.parametrize(
    ("response", "kind", "unprocessed", "items"),
    [
        ({"ResponseMetadata": {"HTTPStatusCode": 200}}, "ok", 0, 0),
        ({"Item": {"pk": {"S": "a"}}}, "ok", 0, 1),
        ({"Items": [{}, {}, {}], "Count": 3}, "ok", 0, 3),
        ({"UnprocessedItems": {}}, "ok", 0, 0),
        (
            {"UnprocessedItems": {"t": [{"PutRequest": {"Item": {}}}] * 3, "u": [{"DeleteRequest": {"Key": {}}}]}},
            "unprocessed",
            4,
            0,
        ),
        (
            {"Responses": {"t": [{}, {}]}, "UnprocessedKeys": {"t": {"Keys": [{}, {}, {}]}}},
            "unprocessed",
            3,
            2,
        ),
        ({"Responses": [{"Item": {}}, {}]}, "ok", 0, 1),
    ],
)
def test_response_rows(response: dict, kind: str, unprocessed: int, items: int) -> None:
    outcome = classify(response)
    assert (outcome.kind, outcome.unprocessed, outcome.items) == (kind, unprocessed, items)


def test_unprocessed_keeps_http_200() -> None:
    outcome = classify({"UnprocessedItems": {"t": [{}]}, "ResponseMetadata": {"HTTPStatusCode": 200}})
    assert outcome.http_status == 200 and outcome.kind == "unprocessed"


@pytest.mark.parametrize(
    ("exception", "label"),
    [
        (
            client_error(
                "ThrottlingException",
                throttlingReasons=[{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": TABLE_ARN}],
            ),
            "ThrottlingException (TableWriteKeyRangeThroughputExceeded)",
        ),
        (client_error("ConditionalCheckFailedException"), "ConditionalCheckFailedException"),
        (DeadlineExceeded(2.0), "DeadlineExceeded"),
    ],
)
def test_label_names_code_and_reason(exception: BaseException, label: str) -> None:
    assert classify(exception=exception).label == label


def test_the_embedded_endpoints_cause_header_is_carried_and_the_services_silence_changes_nothing() -> None:
    reasons = [{"reason": "TableReadKeyRangeThroughputExceeded", "resource": TABLE_ARN}]
    headers = {"x-dynlocust-throttle-cause": "writes-over-ceiling; write-load=1.94; read-load=0.01"}
    local = client_error("ThrottlingException", throttlingReasons=reasons)
    local.response["ResponseMetadata"]["HTTPHeaders"] = headers
    assert classify(exception=local).cause == "writes-over-ceiling"
    aws = classify(
        exception=client_error("ThrottlingException", throttlingReasons=reasons)
    )  # the service sends no such header
    assert aws.cause is None and aws.kind == "throttled" and aws.reasons[0].reason.startswith("TableRead")
    odd = client_error("ThrottlingException", throttlingReasons=reasons)
    odd.response["ResponseMetadata"]["HTTPHeaders"] = {"x-dynlocust-throttle-cause": "anything; else"}
    assert classify(exception=odd).cause is None  # only the endpoint's words, so counts stay bounded


def test_a_gsi_that_refuses_a_base_table_write_is_named() -> None:
    gsi = [{"reason": "IndexWriteKeyRangeThroughputExceeded", "resource": INDEX_ARN}]
    outcome = classify(exception=client_error("ThrottlingException", throttlingReasons=gsi))
    assert outcome.throttled_index == "g" and outcome.reasons[0].index == "g"
    table = [{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": TABLE_ARN}]
    assert classify(exception=client_error("ThrottlingException", throttlingReasons=table)).throttled_index is None
