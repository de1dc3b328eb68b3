"""dynlocust's mapper: values <-> attribute values, entity models, repository operations and the mapper user."""

from __future__ import annotations

from dynlocust.mapper.deserializer import DeserializationError, Deserializer
from dynlocust.mapper.serializer import (
    EmptySetError,
    MapperError,
    NumberError,
    NumberNotFiniteError,
    SerializationError,
    Serializer,
)

__all__ = [
    "DeserializationError",
    "Deserializer",
    "EmptySetError",
    "MapperError",
    "NumberError",
    "NumberNotFiniteError",
    "SerializationError",
    "Serializer",
]
