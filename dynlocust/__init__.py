"""dynlocust: load-test Amazon DynamoDB with Locust, and tell the truth about what it saw.

The public API. Names are loaded on first access so that importing a submodule (the mapper's core, the local
endpoint) does not pull in Locust and its gevent monkey-patching.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from dynlocust.plugin.context import settings_for
    from dynlocust.plugin.fast_users import FastDynamoDBUser
    from dynlocust.plugin.mapper_users import MapperUser
    from dynlocust.plugin.users import DynamoDBUser, shared_boto3_client
    from dynlocust.request.outcomes import Outcome
    from dynlocust.request.record import RequestRecord

_EXPORTS = {
    "DynamoDBUser": "dynlocust.plugin.users",
    "FastDynamoDBUser": "dynlocust.plugin.fast_users",
    "MapperUser": "dynlocust.plugin.mapper_users",
    "Outcome": "dynlocust.request.outcomes",
    "RequestRecord": "dynlocust.request.record",
    "settings_for": "dynlocust.plugin.context",
    "shared_boto3_client": "dynlocust.plugin.users",
}
__all__ = [
    "DynamoDBUser",
    "FastDynamoDBUser",
    "MapperUser",
    "Outcome",
    "RequestRecord",
    "__version__",
    "settings_for",
    "shared_boto3_client",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dynlocust' has no attribute {name!r}")
    return getattr(import_module(module), name)
