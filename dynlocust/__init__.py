"""dynlocust: load-test Amazon DynamoDB with Locust, and tell the truth about what it saw.

The user classes are loaded on first access so that importing a submodule (the mapper's core, the local endpoint)
does not pull in Locust and its gevent monkey-patching.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["DynamoDBUser", "FastDynamoDBUser", "MapperUser", "__version__"]

if TYPE_CHECKING:
    from dynlocust.fast_users import FastDynamoDBUser
    from dynlocust.mapper_users import MapperUser
    from dynlocust.users import DynamoDBUser


def __getattr__(name: str) -> Any:
    if name == "DynamoDBUser":
        from dynlocust.users import DynamoDBUser

        return DynamoDBUser
    if name == "FastDynamoDBUser":
        from dynlocust.fast_users import FastDynamoDBUser

        return FastDynamoDBUser
    if name == "MapperUser":
        from dynlocust.mapper_users import MapperUser

        return MapperUser
    raise AttributeError(f"module 'dynlocust' has no attribute {name!r}")
