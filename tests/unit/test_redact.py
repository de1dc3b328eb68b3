"""Credentials are masked in every log line, including botocore's own debug output of a real signed request."""

from __future__ import annotations

import io
import logging
import socket
from collections.abc import Iterator

import pytest
from botocore.config import Config
from botocore.session import Session

from dynlocust import redact

SECRET = "canary-secret-Zq8vN2pXwY7"
TOKEN = "canary-token-Hh3kL9mRtB5"
KEY_ID = "AKIACANARYLOCAL7"
ENV = {"AWS_SECRET_ACCESS_KEY": SECRET, "AWS_SESSION_TOKEN": TOKEN, "AWS_ACCESS_KEY_ID": KEY_ID}


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        (f"loaded secret {SECRET} from env", "loaded secret *** from env"),
        (f"{{'X-Amz-Security-Token': b'{TOKEN}', 'Host': 'x'}}", "{'X-Amz-Security-Token': b'***', 'Host': 'x'}"),
        ("x-amz-security-token:some-token-from-a-profile\nhost:x", "x-amz-security-token:***\nhost:x"),
        ("Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, Signature=" + "ab12" * 16, "Signature=***"),
        ("Signature:\n" + "cd34" * 16, "Signature:\n***"),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG", "aws_secret_access_key = ***"),
        ('{"SecretAccessKey": "wJalrX", "SessionToken": "IQoJb3"}', '"SecretAccessKey": "***", "SessionToken": "***"'),
        ("PutItem items-run ok 12 ms", "PutItem items-run ok 12 ms"),
        ("Credential=ASIAFROMAPROFILE/20260101/us-east-1/dynamodb/aws4_request", "Credential=***/20260101/us-east-1"),
        ("aws_access_key_id = ASIAFROMAPROFILE", "aws_access_key_id = ***"),
        ('{"AccessKeyId": "ASIAFROMAROLE", "Expiration": "x"}', '"AccessKeyId": "***", "Expiration"'),
        (f"using key {KEY_ID}", "using key ***"),
    ],
)  # fmt: skip
def test_redact_masks_values_and_credential_fields(line: str, kept: str) -> None:
    out = redact.redact(line, redact.secrets_from(ENV))
    assert kept in out
    assert SECRET not in out and TOKEN not in out and KEY_ID not in out and "FROMA" not in out


def test_short_environment_values_are_not_masked_everywhere() -> None:
    assert redact.secrets_from({"AWS_SECRET_ACCESS_KEY": "abc", "AWS_SESSION_TOKEN": ""}) == ()
    # a dummy key id (docker compose's `local`) is not a real one: masking it would mask every such word
    secrets = redact.secrets_from({"AWS_ACCESS_KEY_ID": "local"})
    assert redact.redact("embedded local endpoint", secrets) == "embedded local endpoint"
    assert redact.redact("key AKIAIOSFODNN7EXAMPLE, done", secrets) == "key ***, done"  # shaped like a real one


def test_filter_masks_formatted_args_and_tracebacks() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(redact.RedactingFilter(ENV))
    logger = logging.getLogger("test_redact.child")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.error("args %s and %r", SECRET, {"token": TOKEN})
        try:
            raise ValueError(f"bad secret {SECRET}")
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    text = stream.getvalue()
    assert "args *** and {'token': '***'}" in text
    assert "ValueError: bad secret ***" in text
    assert SECRET not in text and TOKEN not in text


@pytest.fixture
def root_capture() -> Iterator[io.StringIO]:
    """A handler on the root logger at DEBUG, as Locust sets up with --loglevel DEBUG."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield stream
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        for name in ("", *redact.LOGGERS):
            if redact._FILTER is not None:
                logging.getLogger(name).removeFilter(redact._FILTER)


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_botocore_debug_output_of_a_signed_request_carries_no_credential(
    root_capture: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    redact.install()
    client = Session().create_client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url=f"http://127.0.0.1:{closed_port()}",
        config=Config(retries={"total_max_attempts": 1}, connect_timeout=1, read_timeout=1),
    )
    with pytest.raises(Exception, match="Could not connect"):
        client.get_item(TableName="t", Key={"pk": {"S": "a"}})
    text = root_capture.getvalue()
    assert "X-Amz-Security-Token" in text  # botocore did print the header...
    assert "Signature" in text
    assert SECRET not in text and TOKEN not in text and KEY_ID not in text  # ...but not its value
    assert "***" in text
