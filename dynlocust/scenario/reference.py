"""The scenario format as a Markdown page, rendered from the one specification (`spec.json_schema()`).

The documentation site's `docs/scenario-format.md` is this module's output, checked in so that it reads on its
own; a unit test fails when the two differ. Every mapping of the schema becomes a table of its keys (required,
value, default, notes) and every rule between keys a sentence. A JSON Schema keyword this renderer does not know
raises `ValueError` instead of being left out, so the page cannot silently say less than the schema.

Regenerate after a change to the format:
`python -c 'from dynlocust.scenario.reference import write_markdown; write_markdown("docs/scenario-format.md")'`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dynlocust.scenario.spec import LOADER_RULES, json_schema

Schema = dict[str, Any]

VALUE_KEYWORDS = frozenset(
    (
        "$ref", "type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern", "minLength",
        "maxLength", "enum", "const", "items", "minItems", "maxItems", "oneOf", "default", "description",
    )
)  # fmt: skip
MAPPING_KEYWORDS = frozenset(
    ("type", "properties", "required", "additionalProperties", "allOf", "if", "then", "anyOf", "dependentSchemas")
) | {"description", "default"}
ROOT_ONLY = frozenset(("$schema", "$id", "title", "$defs"))
KNOWN_PATTERNS = {r"\S": "not blank"}


@dataclass
class Mapping:
    """One table of the page: a mapping of the format at `path`."""

    title: str
    anchor: str
    schema: Schema


@dataclass
class Page:
    """The page being built: mappings in the order they are met, each rendered once."""

    defs: dict[str, Schema]
    mappings: list[Mapping] = field(default_factory=list)
    anchors: set[str] = field(default_factory=set)

    def add(self, title: str, schema: Schema) -> Mapping:
        """Queue a mapping's table (a mapping already queued, identical, is returned instead: linked again)."""
        for mapping in self.mappings:
            if mapping.schema == schema:
                return mapping
        anchor = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
        if anchor in self.anchors:
            raise ValueError(f"scenario reference: two mappings would be called {title!r}")
        self.anchors.add(anchor)
        self.mappings.append(Mapping(title, anchor, schema))
        return self.mappings[-1]


def _code(value: Any) -> str:
    return f"`{value if isinstance(value, str) else json.dumps(value)}`"


def _number(value: float) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        power = len(str(value)) - 1
        return f"10^{power}" if value >= 10**9 and value == 10**power else f"{value:,}"
    return f"{value:g}"


def _bounds(schema: Schema) -> str:
    low = [f">= {_number(schema['minimum'])}"] if "minimum" in schema else []
    low += [f"> {_number(schema['exclusiveMinimum'])}"] if "exclusiveMinimum" in schema else []
    high = [f"<= {_number(schema['maximum'])}"] if "maximum" in schema else []
    high += [f"< {_number(schema['exclusiveMaximum'])}"] if "exclusiveMaximum" in schema else []
    return " and ".join(low + high)


def _unknown(schema: Schema, allowed: frozenset[str], where: str) -> None:
    extra = sorted(set(schema) - allowed)
    if extra:
        raise ValueError(f"scenario reference: expected only {sorted(allowed)} at {where}, found {extra}")


def _is_mapping(schema: Schema) -> bool:
    return schema.get("type") == "object"


def _alternative_name(schema: Schema) -> str:
    """How one mapping among a `oneOf`'s is told apart: a key's constant, else the keys it requires."""
    for key, sub in schema.get("properties", {}).items():
        if "const" in sub:
            return f"{key}: {sub['const']}"
    if schema.get("required"):
        return "with " + ", ".join(schema["required"])
    return "with " + ", ".join(schema.get("properties", {}))


def value(page: Page, schema: Schema, path: str) -> str:
    """A value's kind in words; a mapping met on the way is queued as a table of its own and linked."""
    _unknown(schema, VALUE_KEYWORDS | MAPPING_KEYWORDS, path)
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        if name not in page.defs:
            raise ValueError(f"scenario reference: {path} refers to {name!r}, which $defs does not define")
        return f"[{name}](#{name.replace('_', '-')})"
    if "oneOf" in schema:
        several = sum(_is_mapping(alt) for alt in schema["oneOf"]) > 1
        return " or ".join(
            value(page, alt, f"{path} ({_alternative_name(alt)})" if several and _is_mapping(alt) else path)
            for alt in schema["oneOf"]
        )
    if "const" in schema:
        return _code(schema["const"])
    if "enum" in schema:
        return "one of " + ", ".join(_code(choice) for choice in schema["enum"])
    kind = schema.get("type")
    if _is_mapping(schema):
        mapping = page.add(path, schema)
        return f"a mapping: [{mapping.title}](#{mapping.anchor})"
    if kind == "array":
        counts = []
        if schema.get("minItems"):
            counts.append(f"at least {_number(schema['minItems'])}")
        if "maxItems" in schema:
            counts.append(f"at most {_number(schema['maxItems'])}")
        items = value(page, schema["items"], f"{path}[]")
        return f"a list of {items}" + (f" ({', '.join(counts)})" if counts else "")
    if kind == "string":
        words = ["text"]
        if "pattern" in schema:
            pattern = schema["pattern"]
            words.append(KNOWN_PATTERNS.get(pattern, f"matching `{pattern}`"))
        if "minLength" in schema or "maxLength" in schema:
            words.append(f"{schema.get('minLength', 1)} to {schema.get('maxLength', 'any')} characters")
        return ", ".join(words)
    if kind in ("integer", "number"):
        bounds = _bounds(schema)
        return ("an integer" if kind == "integer" else "a number") + (f" {bounds}" if bounds else "")
    if kind == "boolean":
        return "`true` or `false`"
    if kind == "null":
        return "nothing (`null` or an empty value)"
    raise ValueError(f"scenario reference: cannot say what {path} is: {schema}")


def _condition(schema: Schema, prefix: str = "") -> str:
    """An `if` schema (properties that must hold, keys that must be there) as a sentence's subject."""
    _unknown(schema, frozenset(("properties", "required")), f"a condition on {prefix or 'the mapping'}")
    return " and ".join(_predicate(sub, prefix + key) for key, sub in schema.get("properties", {}).items())


def _predicate(schema: Schema, name: str) -> str:
    if "anyOf" in schema:
        return " or ".join(_predicate(alt, name) for alt in schema["anyOf"])
    if "const" in schema:
        return f"`{name}` is {_code(schema['const'])}"
    if "minimum" in schema:
        return f"`{name}` is at least {_number(schema['minimum'])}"
    if "properties" in schema:
        return _condition(schema, name + ".")
    if schema.get("type") == "object":
        _unknown(schema, frozenset(("type", "not")), name)
        absent = schema.get("not", {}).get("required", [])
        return f"`{name}` is a mapping" + (" without " + ", ".join(f"`{k}`" for k in absent) if absent else "")
    raise ValueError(f"scenario reference: cannot say when {name} holds: {schema}")


def _consequence(schema: Schema, prefix: str = "") -> str:
    """A `then` (or dependent) schema as what must then hold."""
    _unknown(schema, frozenset(("required", "properties", "not")), f"a rule on {prefix or 'the mapping'}")
    out = []
    for key in schema.get("required", []):
        sub = schema.get("properties", {}).get(key, {})
        if "const" in sub:
            out.append(f"`{prefix}{key}` must be {_code(sub['const'])}")
        else:
            out.append(f"`{prefix}{key}` is required")
        if "required" in sub:
            out.append(_consequence(sub, f"{prefix}{key}."))
    for key in schema.get("not", {}).get("required", []):
        out.append(f"`{prefix}{key}` is not allowed")
    return ", ".join(out)


def _rules(schema: Schema) -> list[str]:
    """The sentences for what a mapping requires beyond its table: conditional keys, at least one of several."""
    rules = []
    conditionals = [*schema.get("allOf", []), *([schema] if "if" in schema else [])]
    for rule in conditionals:
        rule = {"if": rule["if"], "then": rule["then"]} if rule is not schema else rule
        rules.append(f"When {_condition(rule['if'])}: {_consequence(rule['then'])}.")
    for key, dependent in schema.get("dependentSchemas", {}).items():
        rules.append(f"With `{key}`: {_consequence(dependent)}.")
    if "anyOf" in schema:
        keys = [alt["required"] for alt in schema["anyOf"]]
        if any(len(k) != 1 or set(alt) != {"required"} for k, alt in zip(keys, schema["anyOf"], strict=True)):
            raise ValueError(f"scenario reference: cannot say which keys anyOf asks for: {schema['anyOf']}")
        rules.append("At least one of " + ", ".join(f"`{k[0]}`" for k in keys) + " is required.")
    return rules


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _table(page: Page, mapping: Mapping) -> list[str]:
    schema = mapping.schema
    _unknown(schema, MAPPING_KEYWORDS, mapping.title)
    if schema.get("additionalProperties") is not False:
        raise ValueError(f"scenario reference: {mapping.title} allows keys it does not list; say which")
    lines = [f"## `{mapping.title}` {{#{mapping.anchor}}}", ""]
    if "description" in schema:
        lines += [schema["description"], ""]
    lines += ["| key | required | value | default | notes |", "|---|---|---|---|---|"]
    required = set(schema.get("required", []))
    for key, sub in schema["properties"].items():
        default = _code(sub["default"]) if "default" in sub else ""
        kind = value(page, sub, key if mapping.title == "scenario" else f"{mapping.title}.{key}")
        row = [f"`{key}`", "yes" if key in required else "", kind, default, sub.get("description", "")]
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    rules = _rules(schema)
    return [*lines, *(["", *rules] if rules else []), ""]


def _value_section(page: Page, name: str, schema: Schema) -> list[str]:
    """A `$defs` entry that is not a mapping: a value, or a choice of forms (each mapping form gets a table)."""
    anchor = name.replace("_", "-")
    page.anchors.add(anchor)
    lines = [f"## `{name}` {{#{anchor}}}", ""]
    if "description" in schema:
        lines += [schema["description"], ""]
    forms = [{k: v for k, v in alt.items() if k != "description"} for alt in schema.get("oneOf", [schema])]
    paths = [f"{name} ({_alternative_name(form)})" if _is_mapping(form) else name for form in forms]
    return [*lines, *(f"- {value(page, form, path)}" for form, path in zip(forms, paths, strict=True)), ""]


def markdown() -> str:
    """The whole page: the top-level keys, then every mapping and value they lead to, once each."""
    schema = json_schema()
    _unknown(schema, MAPPING_KEYWORDS | ROOT_ONLY, "the top level")
    page = Page(defs=schema["$defs"])
    page.add("scenario", {k: v for k, v in schema.items() if k not in ROOT_ONLY and k != "description"})
    out = [
        "# The scenario format",
        "",
        "<!-- Generated by dynlocust.scenario.reference from dynlocust/scenario/spec.py; do not edit by hand. -->",
        "",
        "A scenario is a YAML file. " + LOADER_RULES,
        "",
        "Every mapping refuses a key it does not list. A value written as a link is described in the section it "
        "links to. The same format as a JSON Schema: `dynlocust/scenario/schema.json`.",
        "",
    ]
    rendered, defs = 0, list(page.defs)
    while rendered < len(page.mappings) or defs:
        if rendered < len(page.mappings):
            out += _table(page, page.mappings[rendered])
            rendered += 1
        elif _is_mapping(page.defs[defs[0]]):
            page.add(defs[0], page.defs[defs.pop(0)])
        else:
            name = defs.pop(0)
            out += _value_section(page, name, page.defs[name])
    return "\n".join(out).rstrip("\n") + "\n"


def write_markdown(path: str | Path) -> None:
    """Rewrite the page at `path` (after a change to the format)."""
    Path(path).write_text(markdown())
