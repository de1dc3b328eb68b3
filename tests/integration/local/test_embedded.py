"""The endpoint as its own process: start, serve boto3, count, stop (terminate, then kill), CLI contract."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from dynlocust.errors import DynlocustError
from dynlocust.local.embedded import LocalEndpoint
from tests.integration.local.conftest import client_for

ROOT = Path(__file__).resolve().parents[3]


def make_table(c: Any) -> None:
    c.create_table(
        TableName="tab1",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def test_endpoint_serves_and_counts(local_endpoint: LocalEndpoint) -> None:
    c = client_for(local_endpoint.url)
    make_table(c)
    for i in range(10):
        c.put_item(TableName="tab1", Item={"pk": {"S": str(i)}})
    with pytest.raises(ClientError):
        c.get_item(TableName="tab1", Key={"nope": {"S": "x"}})
    stats = local_endpoint.stats()
    assert stats["requests_total"] == 12
    assert stats["tables"]["tab1"]["PutItem"]["ok"] == 10
    assert stats["tables"]["tab1"]["GetItem"]["error"] == 1
    local_endpoint.reset_stats()
    assert local_endpoint.stats()["requests_total"] == 0


def test_context_manager_stops_and_reaps() -> None:
    with LocalEndpoint(capacity=False) as ep:
        pid = ep.pid
        assert pid is not None
        assert client_for(ep.url).list_tables()["TableNames"] == []
    assert ep.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_capacity_model_enabled_by_default_throttles() -> None:
    with LocalEndpoint(capacity_scale=0.001) as ep:
        c = client_for(ep.url)
        make_table(c)
        codes = set()
        for i in range(60):
            try:
                c.put_item(TableName="tab1", Item={"pk": {"S": f"k{i}"}})
                codes.add("ok")
            except ClientError as exc:
                codes.add(exc.response["Error"]["Code"])
        assert "ThrottlingException" in codes
        assert ep.stats()["tables"]["tab1"]["PutItem"]["throttled"] >= 1


def test_start_failure_is_reported() -> None:
    taken = socket.socket()
    try:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        ep = LocalEndpoint(port=taken.getsockname()[1], capacity=False)
        with pytest.raises(DynlocustError, match="expected the local endpoint to listen"):
            ep.start()
        assert ep.pid is None
    finally:
        taken.close()


def test_cli_prints_url_writes_ready_file_and_stops_on_sigterm(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dynlocust.local", "--port", "0", "--no-capacity", "--ready-file", str(ready)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        deadline = time.monotonic() + 15
        while not ready.exists():
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.02)
        url = ready.read_text()
        assert client_for(url).list_tables()["TableNames"] == []
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)
        assert proc.returncode == 0
        assert out.decode().strip() == f"dynlocust local endpoint listening on {url}"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_signature_verification_in_a_child_process() -> None:
    import boto3

    from tests.integration.local.conftest import CONFIG

    with LocalEndpoint(capacity=False, verify_signatures=True, credentials={"AKIDCHILD": "child-secret"}) as ep:

        def client(secret: str) -> Any:
            return boto3.client(
                "dynamodb",
                endpoint_url=ep.url,
                config=CONFIG,
                region_name="us-east-1",
                aws_access_key_id="AKIDCHILD",
                aws_secret_access_key=secret,
            )

        assert client("child-secret").list_tables()["TableNames"] == []
        with pytest.raises(ClientError) as exc:
            client("wrong").list_tables()
        assert exc.value.response["Error"]["Code"] == "InvalidSignatureException"
        assert "child-secret" not in repr(ep)


def test_the_endpoints_child_runs_none_of_this_process_greenlets_before_it_execs(tmp_path: Path) -> None:
    """OpenTelemetry's provider (as Locust's `--otel` sets one up) starts a thread in every forked child; in a child
    of gevent's `Popen` that switched to the parent's greenlets, which then ran in the copy (CI, 2026-12-06: a test's
    run started twice). A greenlet that notes its pid on every turn shows where it ran."""
    import gc
    import weakref

    import gevent
    from opentelemetry.sdk.trace import TracerProvider

    provider = TracerProvider(shutdown_on_exit=False)
    trail = tmp_path / "pids"
    fd = os.open(trail, os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def note_pid() -> None:
        while True:
            os.write(fd, f"{os.getpid()}\n".encode())
            gevent.sleep(0.001)

    noting = gevent.spawn(note_pid)
    try:
        for _ in range(3):
            with LocalEndpoint(capacity=False) as ep:
                assert client_for(ep.url).list_tables()["TableNames"] == []
    finally:
        noting.kill()
        os.close(fd)
        provider.shutdown()
        gone = weakref.ref(provider)
        del provider
        gc.collect()
    assert gone() is None  # its after-fork hook holds it weakly: gone, the hook does nothing in the suite's forks
    assert set(trail.read_text().split()) == {str(os.getpid())}
