"""dynlocust's mapper: values <-> attribute values, entity models, repository operations (and the mapper user).

`from dynlocust.mapper import Serializer, Deserializer, MapperUser` is the public entry point. Names are loaded on
first use (PEP 562) because the serializer imports boto3: importing this package must not pull in botocore (and
ssl) before a Locust entry point such as `dynlocust.user_classes.mapper_user` or `dynlocust.compare.cli` has had
gevent patch them, and `MapperUser` (which imports Locust, so it lives beside the other users in
`dynlocust.user_classes.mapper_user`) is loaded only when asked for.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dynlocust.mapper.deserializer import DeserializationError, Deserializer
    from dynlocust.mapper.model import Index, ModelError, entity, model_of
    from dynlocust.mapper.repository import GetManyResult, Repository
    from dynlocust.mapper.serializer import (
        EmptySetError,
        MapperError,
        NumberError,
        NumberNotFiniteError,
        SerializationError,
        Serializer,
    )
    from dynlocust.user_classes.mapper_user import MapperUser

_EXPORTS = {
    "DeserializationError": "deserializer",
    "Deserializer": "deserializer",
    "EmptySetError": "serializer",
    "GetManyResult": "repository",
    "Index": "model",
    "MapperError": "serializer",
    "MapperUser": "dynlocust.user_classes.mapper_user",
    "ModelError": "model",
    "NumberError": "serializer",
    "NumberNotFiniteError": "serializer",
    "Repository": "repository",
    "SerializationError": "serializer",
    "Serializer": "serializer",
    "entity": "model",
    "model_of": "model",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dynlocust.mapper' has no attribute {name!r}")
    value = getattr(import_module(module if "." in module else f"dynlocust.mapper.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "DeserializationError",
    "Deserializer",
    "EmptySetError",
    "GetManyResult",
    "Index",
    "MapperError",
    "MapperUser",
    "ModelError",
    "NumberError",
    "NumberNotFiniteError",
    "Repository",
    "SerializationError",
    "Serializer",
    "entity",
    "model_of",
]
