"""Attribute-value helpers for the local endpoint: equality, ordering, number arithmetic and item size.

Values are in DynamoDB wire format (`{"S": "a"}`, `{"N": "1.5"}`, `{"B": "<base64>"}` ...). These helpers are
on the hot path of every condition, filter and key lookup, so they avoid building intermediate objects.
"""

from __future__ import annotations

import base64
import binascii
import decimal
import re
import string
from decimal import Decimal
from typing import Any, NoReturn

from dynlocust.local import errors
from dynlocust.local.limits import MAX_NESTING_LEVELS

AttributeValue = dict[str, Any]

#: 38 significant digits, like the service; Inexact is not trapped (results are rounded, see the module report).
NUMBER_CONTEXT = decimal.Context(prec=38, rounding=decimal.ROUND_HALF_EVEN, Emax=999999, Emin=-999999)

_INT_MAX = 2**31 - 1  # Java's int: the scale of the service's numbers (BigDecimal)
_OVERFLOW = "Number overflow. Attempting to store a number with magnitude larger than supported range"
_UNDERFLOW = "Number underflow. Attempting to store a number with magnitude smaller than supported range"
_SET_TYPES = frozenset(("SS", "NS", "BS"))
_SCALAR_ORDERED = frozenset(("S", "N", "B"))


class NumberRangeError(ValueError):
    """A number result is outside the service's range (magnitude 1E-130 .. 9.99E+125)."""


def type_of(av: AttributeValue) -> str:
    """Return the type tag of an attribute value ("S", "N", "L", ...)."""
    for t in av:
        return t
    raise ValueError("empty attribute value: expected one type key such as 'S' or 'N', found {}")


def b_bytes(value: str | bytes) -> bytes:
    """Binary values arrive base64-encoded on the wire; tolerate raw bytes from in-process callers."""
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    return base64.b64decode(value)


def to_decimal(value: str) -> Decimal:
    return Decimal(value)


def format_number(d: Decimal) -> str:
    """Render a number as the service does: normalized, no exponent, integers without a fractional part."""
    if not d.is_finite():
        raise NumberRangeError(f"Number is not finite: {d}")
    if d.is_zero():
        return "0"
    d = d.normalize(NUMBER_CONTEXT)
    exp = d.adjusted()
    if exp > 125:
        raise NumberRangeError(_OVERFLOW)
    if exp < -130:
        raise NumberRangeError(_UNDERFLOW)
    return format(d, "f")


def add_numbers(a: str, b: str, subtract: bool = False) -> str:
    """Add (or subtract) two wire-format numbers with 38-digit precision."""
    da, db = Decimal(a), Decimal(b)
    r = NUMBER_CONTEXT.subtract(da, db) if subtract else NUMBER_CONTEXT.add(da, db)
    return format_number(r)


def values_equal(a: AttributeValue, b: AttributeValue) -> bool:
    """Deep equality with the service's semantics: numbers by value, sets ignoring order."""
    ((ta, va),) = a.items()
    ((tb, vb),) = b.items()
    if ta != tb:
        return False
    if ta == "S" or ta == "BOOL" or ta == "NULL":
        return bool(va == vb)
    if ta == "N":
        return va == vb or Decimal(va) == Decimal(vb)
    if ta == "B":
        return va == vb or b_bytes(va) == b_bytes(vb)
    if ta == "SS":
        return set(va) == set(vb)
    if ta == "NS":
        return {Decimal(x) for x in va} == {Decimal(x) for x in vb}
    if ta == "BS":
        return {b_bytes(x) for x in va} == {b_bytes(x) for x in vb}
    if ta == "L":
        return len(va) == len(vb) and all(values_equal(x, y) for x, y in zip(va, vb, strict=True))
    if ta == "M":
        return va.keys() == vb.keys() and all(values_equal(v, vb[k]) for k, v in va.items())
    return bool(va == vb)


def try_compare(a: AttributeValue, b: AttributeValue) -> int | None:
    """Order two scalars of the same type (S, N, B); None when the service would call them incomparable."""
    ((ta, va),) = a.items()
    ((tb, vb),) = b.items()
    if ta != tb:
        return None
    if ta == "S":
        # Code-point order of str equals byte order of its UTF-8 encoding.
        return (va > vb) - (va < vb)
    if ta == "N":
        da, db = Decimal(va), Decimal(vb)
        return (da > db) - (da < db)
    if ta == "B":
        ba, bb = b_bytes(va), b_bytes(vb)
        return (ba > bb) - (ba < bb)
    return None


_TYPE_RANK = {"B": 0, "BOOL": 1, "BS": 2, "L": 3, "M": 4, "N": 5, "NS": 6, "NULL": 7, "S": 8, "SS": 9}


def compare_values(a: AttributeValue, b: AttributeValue) -> int:
    """Total order used by the store for key attributes: S by UTF-8 bytes, N by value, B by bytes.

    Values of different or unordered types are ordered by type name (then as equal) so sorting never fails.
    """
    r = try_compare(a, b)
    if r is not None:
        return r
    ta, tb = type_of(a), type_of(b)
    return (_TYPE_RANK.get(ta, 99) > _TYPE_RANK.get(tb, 99)) - (_TYPE_RANK.get(ta, 99) < _TYPE_RANK.get(tb, 99))


def number_size(value: str) -> int:
    """Bytes of a number as the service counts them: one, plus its significant digits in pairs aligned on the
    decimal point (base 100: 3.14159 is 03 14 15 90, four), plus one for a negative number (as dynalite's tests
    record the service's item-size limit: 1 + ceil(digits / 2), one more when the digit count and the exponent
    are both even, one more for the sign)."""
    body = value.lstrip("+-")
    mantissa, _, exponent = body.lower().partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    stripped = digits.lstrip("0")
    significant = stripped.rstrip("0")
    if not significant:
        return 1
    first = len(whole) - (len(digits) - len(stripped)) - 1 + (int(exponent) if exponent else 0)
    n = len(significant)
    return 1 + (n + 1) // 2 + (0 if n % 2 or first % 2 else 1) + (1 if value[:1] == "-" else 0)


def _binary_size(value: str | bytes) -> int:
    if isinstance(value, bytes | bytearray):
        return len(value)
    n = len(value)
    pad = 2 if value.endswith("==") else 1 if value.endswith("=") else 0
    return n * 3 // 4 - pad


def value_size(av: AttributeValue) -> int:
    """Bytes of one attribute value per the developer guide's item-size rules (the name is not included)."""
    ((t, v),) = av.items()
    if t == "S":
        return len(v.encode("utf-8")) if not v.isascii() else len(v)
    if t == "N":
        return number_size(v)
    if t == "B":
        return _binary_size(v)
    if t == "BOOL" or t == "NULL":
        return 1
    if t == "SS":
        return sum(len(x.encode("utf-8")) for x in v)
    if t == "NS":
        return sum(number_size(x) for x in v)
    if t == "BS":
        return sum(_binary_size(x) for x in v)
    if t == "L":
        return 3 + sum(1 + value_size(x) for x in v)
    if t == "M":
        return 3 + sum(1 + len(k.encode("utf-8")) + value_size(x) for k, x in v.items())
    raise ValueError(f"unknown attribute value type: expected one of S N B BOOL NULL SS NS BS L M, found {t!r}")


def item_size(item: dict[str, AttributeValue] | None) -> int:
    """DynamoDB item size in bytes: each attribute name's UTF-8 length plus its value's size (0 for no item)."""
    if not item:
        return 0
    size = 0
    for k, v in item.items():
        size += len(k) if k.isascii() else len(k.encode("utf-8"))
        s = v.get("S")  # a string, the common case, inline
        if s.__class__ is str and len(v) == 1:
            size += len(s) if s.isascii() else len(s.encode("utf-8"))
        else:
            size += value_size(v)
    return size


def is_set_type(t: str) -> bool:
    return t in _SET_TYPES


def is_ordered_type(t: str) -> bool:
    return t in _SCALAR_ORDERED


# -- wire checks ------------------------------------------------------------------------------------------------
#: A number as the service reads it: optional sign, digits with an optional fraction, optional exponent; no spaces.
_NUMBER_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_MAX_DIGITS = 38
_NONZERO_DIGITS = (b"1", b"2", b"3", b"4", b"5", b"6", b"7", b"8", b"9")
NESTING_MESSAGE = (
    "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"
)
EMPTY_MESSAGE = "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"
_SET_SHAPES = {"SS": "string", "NS": "string", "BS": "blob"}
INVALID_VALUES = "One or more parameter values were invalid: "
_NULL_MESSAGE = INVALID_VALUES + "Null attribute value types must have the value of true"
# the service's wording, double space included (captured against the service: moto's aws_verified tests, dynoxide)
_EMPTY_SET = {
    "SS": "An string set  may not be empty",
    "NS": "An number set  may not be empty",
    "BS": "Binary sets should not be empty",
}
_MEMBER_SHAPES = {
    "S": "string",
    "N": "string",
    "B": "blob",
    "BOOL": "boolean",
    "NULL": "boolean",
    "M": "map",
    "L": "list",
}
_MEMBER_SHAPES.update(dict.fromkeys(_SET_SHAPES, "list"))
_AV_JAVA = errors.JAVA_MODEL + "AttributeValue"
_MEMBER_JAVA = {
    "M": f"java.util.Map<java.lang.String, {_AV_JAVA}>",
    "L": f"java.util.List<{_AV_JAVA}>",
    "SS": "java.util.List<java.lang.String>",
    "NS": "java.util.List<java.lang.String>",
    "BS": "java.util.List<java.nio.ByteBuffer>",
}


def _all_digits(raw: bytes) -> bool:
    # bytes.translate deletes at memory speed; str.isdigit walks the Unicode database (~25 ns a character)
    return bool(raw) and not raw.translate(None, b"0123456789")


def check_number_text(v: str) -> None:
    """Refuse a number the service cannot read (spaces, words, NaN) before anything parses it.

    A long text is checked with byte operations instead of the regular expression and refused by its
    significant digits, so megabytes of digits cost milliseconds and never reach Decimal.
    """
    if len(v) <= 2 * _MAX_DIGITS:
        if _NUMBER_RE.fullmatch(v) is None:
            raise errors.validation(f"The parameter cannot be converted to a numeric value: {v}")
        return
    raw = v.encode("utf-8", "surrogatepass")
    body = raw[1:] if raw[:1] in (b"+", b"-") else raw
    mantissa, e, exponent = body.replace(b"E", b"e").partition(b"e")
    digits = mantissa.replace(b".", b"", 1)
    exp_digits = exponent[1:] if exponent[:1] in (b"+", b"-") else exponent
    if not _all_digits(digits) or (e and not _all_digits(exp_digits)):
        raise errors.validation(f"The parameter cannot be converted to a numeric value: {v}")
    firsts = [i for i in (digits.find(d) for d in _NONZERO_DIGITS) if i >= 0]
    if firsts and max(digits.rfind(d) for d in _NONZERO_DIGITS) - min(firsts) + 1 > _MAX_DIGITS:
        raise errors.validation("Attempting to store more than 38 significant digits in a Number")


def check_value(av: Any, level: int = 1) -> None:
    """Check one attribute value as the service does on input: JSON types, NULL/BOOL forms, numbers (form, 38
    significant digits, range), sets (not empty, no duplicates) and nesting. The only walk of a request's values.

    Raises the service's SerializationException for a JSON value of the wrong type and its ValidationException for
    a value nested more than MAX_NESTING_LEVELS deep; never recurses deeper than that, whatever the input.
    On every request's path: the common cases (one S or N) are tested first, with no call beyond this one.
    """
    if av.__class__ is not dict or len(av) != 1:
        _refuse_shape(av, level)
        return
    for t, v in av.items():
        if t == "S":
            if v.__class__ is not str:
                _refuse_member(t, v)
        elif t == "N":
            if v.__class__ is not str:
                _refuse_member(t, v)
            if len(v) <= _MAX_DIGITS and v.isdigit() and v.isascii() and (v[0] != "0" or len(v) == 1):
                continue  # a plain integer of at most 38 digits, no leading zero: canonical already, the common case
            if len(v) > 2 * _MAX_DIGITS or _NUMBER_RE.fullmatch(v) is None:
                check_number_text(v)
            av["N"] = canonical_number(v)
        elif t == "M" or t == "L":
            if v.__class__ is not (dict if t == "M" else list):
                _refuse_member(t, v)
            if v:
                if level >= MAX_NESTING_LEVELS:
                    raise errors.validation(NESTING_MESSAGE)
                for x in v.values() if v.__class__ is dict else v:
                    check_value(x, level + 1)
        elif t in _SET_SHAPES:
            if v.__class__ is not list:
                _refuse_member(t, v)
            for x in v:
                if x.__class__ is not str:
                    raise errors.wrong_json_type(x, _SET_SHAPES[t])
                if t == "NS":
                    check_number_text(x)
                elif t == "BS":
                    check_base64(x)
            if not v:
                raise errors.validation(INVALID_VALUES + _EMPTY_SET[t])
            members = [canonical_number(x) for x in v] if t == "NS" else v  # 1 and 1.0 are one member
            if len(set(members)) != len(members):
                raise errors.validation(f"{INVALID_VALUES}Input collection [{', '.join(v)}] contains duplicates.")
            av[t] = sorted_members(t, members)
        elif t == "B":
            if v.__class__ is not str:
                _refuse_member(t, v)
            check_base64(v)
        elif t == "BOOL" or t == "NULL":
            if v.__class__ is not bool:
                v = av[t] = _boolean(t, v)
            if t == "NULL" and not v:
                raise errors.validation(_NULL_MESSAGE)
        else:
            _refuse_shape(av, level)  # a member the model does not define ({"dog": "cat"}): the service ignores it


def check_nesting(item: dict[str, AttributeValue]) -> None:
    """Refuse an item whose values nest deeper than MAX_NESTING_LEVELS, as PutItem refuses it (`check_value`).

    Why apart: an item built by the endpoint (an update applied, a PartiQL literal) never went through
    `check_value` as a whole; this runs on every item as it would be stored. It walks without recursing and stops
    at the first member past the limit, so no item, however deep, costs more than its members.
    """
    stack: list[tuple[Any, int]] = []
    for av in item.values():
        if av.__class__ is dict and ("M" in av or "L" in av):
            stack.append((av, 1))
    while stack:
        av, level = stack.pop()
        members = av.get("M") if "M" in av else av.get("L")
        if not members:
            continue
        if level >= MAX_NESTING_LEVELS:
            raise errors.validation(NESTING_MESSAGE)
        for x in members.values() if members.__class__ is dict else members:
            if x.__class__ is dict and ("M" in x or "L" in x):
                stack.append((x, level + 1))


def sorted_members(t: str, members: list[str]) -> list[str]:
    """A string or binary set's members in the order the service returns them: by their bytes (issue 45; a str's
    code point order is its UTF-8 byte order). A number set keeps its order: no recorded order was found."""
    if t == "SS":
        return sorted(members)
    if t == "BS":
        return sorted(members, key=b_bytes)
    return members


def canonical_number(text: str) -> str:
    """The number as the service stores and returns it (`007` -> `7`, `1e3` -> `1000`, `.5` -> `0.5`), refused
    unless it has at most 38 significant digits and a magnitude within 1E-130 .. 9.99E+125 (`text` is well formed:
    check_number_text)."""
    _check_java_exponent(text)
    d = Decimal(text)
    if d.is_zero():
        if d.adjusted() > 125:  # 0e126 too: its precision less its scale passes 126 (issue 45)
            raise errors.validation(_OVERFLOW)
        return "0"
    significant = "".join(map(str, d.as_tuple().digits)).strip("0")
    if len(significant) > _MAX_DIGITS:
        raise errors.validation("Attempting to store more than 38 significant digits in a Number")
    adjusted = d.adjusted()
    if adjusted >= _INT_MAX:  # precision less scale, one more, passes Java's int and turns negative (issue 45)
        raise errors.validation(_UNDERFLOW)
    if adjusted > 125:
        raise errors.validation(_OVERFLOW)
    if adjusted < -130:
        raise errors.validation(_UNDERFLOW)
    return format(d.normalize(NUMBER_CONTEXT), "f")


def _check_java_exponent(text: str) -> None:
    """Refuse the written exponent of a well-formed number as the service's BigDecimal parse refuses it: an
    exponent, or the scale it makes with the fraction's digits, outside Java's int ('1e99999999999': "The
    parameter cannot be converted to a numeric value", issue 45). Read from the text, before Decimal sees it."""
    mantissa, _, written = text.lower().partition("e")
    if not written:
        return
    exponent = int(written)
    _, _, fraction = mantissa.partition(".")
    if not -_INT_MAX - 1 <= exponent <= _INT_MAX or not -_INT_MAX - 1 <= len(fraction) - exponent <= _INT_MAX:
        raise errors.validation(f"The parameter cannot be converted to a numeric value: {text}")


_BASE64_ALPHABET = frozenset(string.ascii_letters + string.digits + "+/=")


def check_base64(v: str) -> None:
    """Refuse a B or BS member that is not canonical base64, with the service's SerializationException.

    Why here: a value is decoded later, in comparisons and sizes; one that cannot be decoded must never get that
    far. Canonical means a length that is a multiple of 4, only the base64 alphabet, padding only at the end, and
    no bits set past the data in the last character (the service refuses `+/+=`).
    """
    try:
        if len(v) % 4 == 0 and base64.b64encode(base64.b64decode(v, validate=True)) == v.encode("ascii"):
            return
    except (ValueError, binascii.Error):
        pass
    shown = f"'{v}' can not be converted to a Blob: "
    if len(v) % 4:
        raise errors.serialization(
            f"{shown}Base64 encoded length is expected a multiple of 4 bytes but found: {len(v)}"
        )
    for i, c in enumerate(v):
        if c not in _BASE64_ALPHABET or (c == "=" and v[i + 1 : i + 2] not in ("", "=")):
            raise errors.serialization(f"{shown}Invalid Base64 character: '{c}'")
    # the service's wording, misspelling included (as recorded against it by dynalite's tests)
    raise errors.serialization(f"{shown}Invalid last non-pad Base64 character dectected")


def _refuse_shape(av: Any, level: int = 1) -> None:
    """An attribute value that is not exactly one member: members the model does not define are ignored, as the
    service's deserializer ignores them (`{"dog": "cat"}` is an empty value, as dynalite's tests record it)."""
    if av.__class__ is not dict:  # an item's value, a list's element: a collection's member
        raise errors.wrong_json_type(av, "structure", _AV_JAVA, member=True)
    unknown = [t for t in av if t not in _MEMBER_SHAPES]
    if unknown and len(av) - len(unknown) == 1:
        for t in unknown:
            del av[t]
        check_value(av, level)
        return
    if len(av) == len(unknown):
        raise errors.validation(EMPTY_MESSAGE)
    raise errors.validation(
        "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes"
    )


def _refuse_member(t: str, v: Any) -> NoReturn:
    if v is None:
        raise errors.validation(EMPTY_MESSAGE)
    raise errors.wrong_json_type(v, _MEMBER_SHAPES[t], _MEMBER_JAVA.get(t, ""))


def _boolean(t: str, v: Any) -> bool:
    """A BOOL or NULL given as text the service reads as a boolean ("true", "1", "yes"...), else refused."""
    read = errors.boolean_text(v)
    if read is None:
        _refuse_member(t, v)
    return read
