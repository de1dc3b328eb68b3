"""What PartiQL responses carry besides items: NextToken, a batch statement's error code, summed ConsumedCapacity."""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

import orjson

from dynlocust.local import errors
from dynlocust.local.errors import ServiceError
from dynlocust.local.partiql.ast import AV


def _request_hash(req: dict[str, Any]) -> str:
    """What a NextToken is bound to: the statement and its parameters (the service refuses it elsewhere)."""
    basis = orjson.dumps([req.get("Statement"), req.get("Parameters")], option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(basis).hexdigest()[:16]


def encode_token(last_key: AV | None, req: dict[str, Any], part: int = 0) -> str:
    """Where the next page starts: the last key read (if any) in the `part`-th query of a decomposed SELECT."""
    return base64.urlsafe_b64encode(orjson.dumps({"k": last_key, "i": part, "h": _request_hash(req)})).decode()


def decode_token(token: str, req: dict[str, Any]) -> tuple[AV | None, int]:
    try:
        data = orjson.loads(base64.urlsafe_b64decode(token.encode()))
        last_key, part, bound = data["k"], int(data["i"]), data["h"]
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        raise errors.validation("Invalid NextToken") from exc
    if bound != _request_hash(req):
        raise errors.validation("NextToken does not match request")
    return last_key, part


def batch_code(exc: ServiceError) -> str:
    """BatchStatementError.Code from an exception code (the API's enum drops 'Exception', says 'Error')."""
    code = exc.code.removesuffix("Exception")
    return {
        "Validation": "ValidationError",
        "Throttling": "ThrottlingError",
        "InternalServer": "InternalServerError",
    }.get(code, code)


def merge_consumed(into: dict[str, dict[str, Any]], cc: dict[str, Any] | None) -> None:
    """Adds one statement's ConsumedCapacity into the per-table totals of a batch."""
    if cc:
        add_units(into.setdefault(cc["TableName"], {}), cc)


def add_units(into: dict[str, Any], more: dict[str, Any]) -> None:
    for k, v in more.items():
        if isinstance(v, dict):
            add_units(into.setdefault(k, {}), v)
        else:
            into[k] = v if k == "TableName" else into.get(k, 0.0) + v
