"""dynlocust: load-test Amazon DynamoDB with Locust, and tell the truth about what it saw.

`DynamoDBUser` is loaded on first access so that importing a submodule (the mapper, the local endpoint) does not
pull in Locust and its gevent monkey-patching.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["DynamoDBUser", "FastDynamoDBUser", "__version__"]

if TYPE_CHECKING:
    from dynlocust.fast_users import FastDynamoDBUser
    from dynlocust.users import DynamoDBUser


def __getattr__(name: str) -> Any:
    if name == "DynamoDBUser":
        from dynlocust.users import DynamoDBUser

        return DynamoDBUser
    if name == "FastDynamoDBUser":
        from dynlocust.fast_users import FastDynamoDBUser

        return FastDynamoDBUser
    raise AttributeError(f"module 'dynlocust' has no attribute {name!r}")
