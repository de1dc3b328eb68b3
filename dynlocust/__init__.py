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
    from dynlocust.request.outcomes import Outcome
    from dynlocust.request.record import RequestRecord
    from dynlocust.user_classes.dynamodb_user import DynamoDBUser, shared_boto3_client
    from dynlocust.user_classes.fast_user import FastDynamoDBUser
    from dynlocust.user_classes.mapper_user import MapperUser

_EXPORTS = {
    "DynamoDBUser": "dynlocust.user_classes.dynamodb_user",
    "FastDynamoDBUser": "dynlocust.user_classes.fast_user",
    "MapperUser": "dynlocust.user_classes.mapper_user",
    "Outcome": "dynlocust.request.outcomes",
    "RequestRecord": "dynlocust.request.record",
    "settings_for": "dynlocust.plugin.context",
    "shared_boto3_client": "dynlocust.user_classes.dynamodb_user",
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
