"""A DynamoDB-shaped fault server for tests: every modelled error in the service's exact wire format, plus 5xx,
dropped and reset connections, a stall and a byte trickle.

The table name in the request picks the behaviour (see `FAULTS`), so one server serves every case. It runs as its own
process (`python -m tests.support.faultserver --ready-file F`) so its timing is not at the mercy of the test's gevent
loop, and it logs every request it receives (operation, table, botocore's `amz-sdk-request` header) at
`GET /_faults/log`, so a test can prove exactly one HTTP request reached it per call.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import socketserver
import struct
import sys
import threading
import time
import zlib
from pathlib import Path
from typing import Any

PREFIX = "com.amazonaws.dynamodb.v20120810#"
THROTTLE_MESSAGE = (
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or "
    "index so please try again shortly. If exceptions persist, check if you have a hot key: "
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html"
)
TABLE_ARN = "arn:aws:dynamodb:us-east-1:000000000000:table/"


def _error(code: str, status: int = 400, **extra: Any) -> tuple[int, dict[str, Any]]:
    body: dict[str, Any] = {"__type": PREFIX + code}
    body.update(extra)
    return status, body


def _cancelled(*codes: str) -> tuple[int, dict[str, Any]]:
    return _error(
        "TransactionCanceledException",
        Message=f"Transaction cancelled, please refer cancellation reasons for specific reasons [{', '.join(codes)}]",
        CancellationReasons=[{"Code": c, **({"Message": "x"} if c != "None" else {})} for c in codes],
    )


# Behaviour by table name: a (status, JSON body) answer, or a socket-level fault name.
FAULTS: dict[str, Any] = {
    "ok": (200, {}),
    "ok-item": (200, {"Item": {"pk": {"S": "a"}}}),
    "throttle": _error(
        "ThrottlingException",
        message=THROTTLE_MESSAGE,
        throttlingReasons=[{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": TABLE_ARN + "throttle"}],
    ),
    "throttle-index": _error(
        "ThrottlingException",
        message=THROTTLE_MESSAGE,
        throttlingReasons=[
            {"reason": "IndexWriteMaxOnDemandThroughputExceeded", "resource": TABLE_ARN + "t/index/gsi1"}
        ],
    ),
    "provisioned": _error(
        "ProvisionedThroughputExceededException",
        message="The level of configured provisioned throughput for the table was exceeded.",
        ThrottlingReasons=[{"reason": "TableReadProvisionedThroughputExceeded", "resource": TABLE_ARN + "p"}],
    ),
    "request-limit": _error(
        "RequestLimitExceeded",
        message="Throughput exceeds the current throughput limit for your account.",
        ThrottlingReasons=[{"reason": "TableWriteAccountLimitExceeded", "resource": TABLE_ARN + "r"}],
    ),
    "txn-throttle": _cancelled("None", "ThrottlingError"),
    "txn-provisioned": _cancelled("ProvisionedThroughputExceeded", "None"),
    "txn-condition": _cancelled("ConditionalCheckFailed", "None"),
    "txn-conflict": _cancelled("None", "TransactionConflict"),
    "txn-validation": _cancelled("ValidationError"),
    "condition": _error("ConditionalCheckFailedException", message="The conditional request failed"),
    "conflict": _error("TransactionConflictException", message="Transaction is ongoing for the item"),
    "validation": _error("ValidationException", message="The provided key element does not match the schema"),
    "not-found": _error("ResourceNotFoundException", message="Requested resource not found"),
    "unrecognized": _error(
        "UnrecognizedClientException", message="The security token included in the request is invalid."
    ),
    "signature": _error(
        "InvalidSignatureException", message="The request signature we calculated does not match the signature"
    ),
    "access-denied": _error("AccessDeniedException", message="User is not authorized to perform: dynamodb:PutItem"),
    "internal": _error("InternalServerError", 500, message="Internal server error"),
    "unavailable": _error("ServiceUnavailable", 503, message="Service unavailable"),
    "unprocessed": (
        200,
        {
            "UnprocessedItems": {
                "unprocessed": [
                    {"PutRequest": {"Item": {"pk": {"S": "a"}}}},
                    {"PutRequest": {"Item": {"pk": {"S": "b"}}}},
                ]
            }
        },
    ),
    "unprocessed-keys": (
        200,
        {
            "Responses": {"unprocessed-keys": [{"pk": {"S": "x"}}]},
            "UnprocessedKeys": {"unprocessed-keys": {"Keys": [{"pk": {"S": "a"}}, {"pk": {"S": "b"}}]}},
        },
    ),
    "drop": "drop",
    "reset": "reset",
    "stall": "stall",
    "trickle": "trickle",
}


class _Log:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.entries: list[dict[str, Any]] = []

    def add(self, entry: dict[str, Any]) -> None:
        with self.lock:
            self.entries.append(entry)

    def snapshot(self) -> list[dict[str, Any]]:
        with self.lock:
            return list(self.entries)

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


LOG = _Log()


class _Tables:
    """Control-plane answers, so a `TableManager` can run against this server: the fault tables exist (untagged,
    ACTIVE), and tables created here are remembered with their tags until deleted."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tags: dict[str, list[dict[str, str]]] = {}

    def answer(self, operation: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        name = str(body.get("TableName") or body.get("ResourceArn", "").rpartition("/")[2])
        with self.lock:
            exists = name in self.tags or name in FAULTS
            if operation == "CreateTable":
                if exists:
                    return _error("ResourceInUseException", message=f"Table already exists: {name}")
                self.tags[name] = list(body.get("Tags", []))
                return 200, {"TableDescription": self._describe(name, "CREATING")}
            if not exists:
                return _error("ResourceNotFoundException", message=f"Requested resource not found: Table: {name}")
            if operation == "DescribeTable":
                return 200, {"Table": self._describe(name, "ACTIVE")}
            if operation == "ListTagsOfResource":
                return 200, {"Tags": self.tags.get(name, [])}
            if operation == "DeleteTable":
                if name not in self.tags:
                    return _error("AccessDeniedException", message=f"fault tables cannot be deleted: {name}")
                del self.tags[name]
                return 200, {"TableDescription": self._describe(name, "DELETING")}
        return _error("ValidationException", message=f"unsupported control-plane operation {operation}")

    @staticmethod
    def _describe(name: str, status: str) -> dict[str, Any]:
        return {"TableName": name, "TableArn": TABLE_ARN + name, "TableStatus": status}


TABLES = _Tables()
CONTROL_PLANE = frozenset({"CreateTable", "DescribeTable", "DeleteTable", "ListTagsOfResource"})


def _table_of(body: dict[str, Any]) -> str:
    if "TableName" in body:
        return str(body["TableName"])
    if "RequestItems" in body:
        return str(next(iter(body["RequestItems"]), ""))
    for action in body.get("TransactItems", ()):
        inner: dict[str, Any] = next(iter(action.values()), {})
        if "TableName" in inner:
            return str(inner["TableName"])
    return ""


class Handler(socketserver.StreamRequestHandler):
    """Minimal HTTP/1.1 with keep-alive: enough for botocore, fully under our control for socket faults."""

    def handle(self) -> None:
        while True:
            request_line = self.rfile.readline(65537)
            if not request_line:
                return
            method, path, _ = request_line.decode("latin-1").split(" ", 2)
            headers: dict[str, str] = {}
            while True:
                line = self.rfile.readline(65537).decode("latin-1")
                if line in ("\r\n", "\n", ""):
                    break
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0") or 0)
            raw = self.rfile.read(length) if length else b""
            if path.startswith("/_faults/"):
                self._control(method, path)
                continue
            body = json.loads(raw or b"{}")
            target = headers.get("x-amz-target", "")
            table = _table_of(body)
            LOG.add(
                {
                    "operation": target.rpartition(".")[2],
                    "table": table,
                    "attempt": headers.get("amz-sdk-request", ""),
                    "time": time.time(),
                }
            )
            if target.rpartition(".")[2] in CONTROL_PLANE:
                self._send(*TABLES.answer(target.rpartition(".")[2], body))
                continue
            fault = FAULTS.get(table, FAULTS["ok"])
            if isinstance(fault, str):
                self._socket_fault(fault)
                return
            status, payload = fault
            self._send(status, payload)

    def _control(self, method: str, path: str) -> None:
        if path == "/_faults/log" and method == "GET":
            self._send(200, {"requests": LOG.snapshot()}, dynamo=False)
        elif path == "/_faults/tables" and method == "GET":
            self._send(200, {"tables": sorted(TABLES.tags)}, dynamo=False)
        elif path == "/_faults/clear":
            LOG.clear()
            self._send(200, {}, dynamo=False)
        else:
            self._send(404, {}, dynamo=False)

    def _send(self, status: int, payload: dict[str, Any], *, dynamo: bool = True) -> None:
        data = json.dumps(payload).encode()
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 500: "Internal Server Error"}.get(status, "Error")
        head = [
            f"HTTP/1.1 {status} {reason}",
            f"Content-Length: {len(data)}",
            "Content-Type: application/x-amz-json-1.0",
            "x-amzn-RequestId: FAULTSERVER",
        ]
        if dynamo:
            head.append(f"x-amz-crc32: {zlib.crc32(data)}")
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data)
        self.wfile.flush()

    def _socket_fault(self, fault: str) -> None:
        sock = self.connection
        if fault == "drop":
            sock.close()
        elif fault == "reset":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.close()
        elif fault == "stall":
            time.sleep(30)
            sock.close()
        elif fault == "trickle":
            data = json.dumps({"Item": {"pk": {"S": "a" * 200}}}).encode()
            head = (
                "HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\n"
                f"Content-Length: {len(data)}\r\nx-amz-crc32: {zlib.crc32(data)}\r\n\r\n"
            ).encode()
            try:
                sock.sendall(head)
                for byte in data:  # one byte every 0.3 s: never idle long enough to trip a 1 s read timeout
                    time.sleep(0.3)
                    sock.sendall(bytes([byte]))
            except OSError:
                return


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ready-file", type=Path, required=True)
    args = parser.parse_args(argv)
    with Server(("127.0.0.1", args.port), Handler) as server:
        port = server.server_address[1]
        tmp = args.ready_file.with_suffix(".tmp")
        tmp.write_text(f"http://127.0.0.1:{port}")
        tmp.rename(args.ready_file)
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever(poll_interval=0.1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
