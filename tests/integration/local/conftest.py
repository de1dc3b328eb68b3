"""Fixtures for real-process tests of the local endpoint."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import botocore.config
import pytest

from dynlocust.local.embedded import LocalEndpoint

CONFIG = botocore.config.Config(retries={"mode": "standard", "total_max_attempts": 1}, read_timeout=10)
CREDS = {"aws_access_key_id": "local", "aws_secret_access_key": "local", "region_name": "us-east-1"}


@pytest.fixture
def local_endpoint() -> Iterator[LocalEndpoint]:
    ep = LocalEndpoint(capacity=False)
    ep.start()
    try:
        yield ep
    finally:
        ep.stop()


def client_for(url: str) -> Any:
    return boto3.client("dynamodb", endpoint_url=url, config=CONFIG, **CREDS)
