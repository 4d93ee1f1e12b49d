"""A plausible value for a JSON schema: FakeGemini's tool-call arguments and structured output.

What a person reading a fake call expects to see: the schema's own hints first (``enum``,
``const``, ``default``, ``examples``), then a value for its ``format`` (a date, an email, a
URL...), then one for the property's name (a city for ``city``, a country for ``country``),
kept within the schema's bounds (``minimum``/``maximum``, their exclusive forms,
``minLength``/``maxLength``, ``minItems``/``maxItems``, ``prefixItems``, integer
``multipleOf``). Same-document ``$ref`` (``#/$defs/Name``) is followed and ``allOf`` merged;
recursion ends (once a ``$ref`` nests in itself, the least the schema allows), and a schema
whose value would be huge or endless raises :class:`SchemaTooComplex`, as Gemini refuses it.
Not honoured: ``pattern``, ``uniqueItems``, ``not``, ``if``/``then``, ``oneOf``'s exclusivity.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import unquote

__all__ = ["TOO_COMPLEX", "SchemaTooComplex", "schema_value", "structured_value"]

TOO_COMPLEX: Final = (
    "The specified schema produces a constraint that has too many states for serving."
    " Typical causes of this error are schemas with lots of text (for example, very long"
    " property or enum names), schemas with long array length limits (especially when"
    " nested), or schemas using complex value matchers (for example, integers and numbers"
    " with minimum/maximum or strings with complex formats like date-time)"
)
"""Google's 400 message for a response schema it cannot serve."""
_MAX_WORK: Final = 100_000
"""Schema nodes one value may visit."""
_MAX_SIZE: Final = 1_000_000
"""About the bytes of one value's JSON."""
_MAX_DEPTH: Final = 64
"""How deep one value's schemas may nest (``$ref`` steps included)."""
_BRANCHES: Final = 8
"""The ``anyOf``/``oneOf`` branches looked at when choosing one."""


class SchemaTooComplex(ValueError):
    """A schema whose value would be huge or never end (Gemini refuses such a schema)."""


_FORMATS: Final = {
    "date": "2025-06-15",
    "date-time": "2025-06-15T09:30:00Z",
    "time": "09:30:00",
    "duration": "PT1H",
    "email": "ada@example.com",
    "idn-email": "ada@example.com",
    "uri": "https://example.com",
    "url": "https://example.com",
    "iri": "https://example.com",
    "uri-reference": "https://example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
}
"""A value for each string ``format`` of JSON Schema (and OpenAPI's ``url``)."""

_WORDS: Final = {
    "city": "Paris",
    "town": "Paris",
    "location": "Paris, France",
    "place": "Paris, France",
    "destination": "Paris, France",
    "address": "1 Rue de Rivoli, Paris",
    "street": "1 Rue de Rivoli",
    "country": "France",
    "region": "Île-de-France",
    "state": "Île-de-France",
    "timezone": "Europe/Paris",
    "tz": "Europe/Paris",
    "language": "en",
    "lang": "en",
    "locale": "en-US",
    "currency": "EUR",
    "unit": "celsius",
    "units": "metric",
    "email": "ada@example.com",
    "mail": "ada@example.com",
    "url": "https://example.com",
    "uri": "https://example.com",
    "link": "https://example.com",
    "website": "https://example.com",
    "domain": "example.com",
    "host": "example.com",
    "phone": "+33 1 23 45 67 89",
    "name": "Ada Lovelace",
    "username": "ada",
    "user": "ada",
    "first": "Ada",
    "last": "Lovelace",
    "date": "2025-06-15",
    "day": "2025-06-15",
    "time": "09:30",
    "datetime": "2025-06-15T09:30:00Z",
    "query": "weather in Paris",
    "q": "weather in Paris",
    "search": "weather in Paris",
    "keyword": "weather",
    "keywords": "weather",
    "topic": "weather",
    "subject": "Weather in Paris",
    "title": "Weather in Paris",
    "message": "Hello!",
    "text": "Hello!",
    "content": "Hello!",
    "body": "Hello!",
    "prompt": "Hello!",
    "description": "A short description.",
    "summary": "A short summary.",
    "answer": "Paris is the capital of France.",
    "reason": "It is what the question asks for.",
    "reasoning": "It is what the question asks for.",
    "explanation": "It is what the question asks for.",
    "path": "README.md",
    "file": "README.md",
    "filename": "README.md",
    "directory": "docs",
    "folder": "docs",
    "symbol": "GOOG",
    "ticker": "GOOG",
    "color": "blue",
    "colour": "blue",
    "id": "id-1",
    "code": "ABC123",
    "status": "active",
    "category": "general",
    "type": "default",
}
"""A string for a property by one of the words of its name (``start_date``: ``date``)."""

_NUMBERS: Final = {
    "latitude": 48.8566,
    "lat": 48.8566,
    "longitude": 2.3522,
    "lon": 2.3522,
    "lng": 2.3522,
    "temperature": 21.5,
    "temp": 21.5,
    "age": 36,
    "year": 2025,
    "month": 6,
    "hour": 9,
    "price": 9.99,
    "amount": 10,
    "quantity": 2,
    "count": 3,
    "limit": 10,
    "days": 3,
    "page": 1,
    "offset": 0,
    "percent": 50,
    "percentage": 50,
}
"""A number for a property by one of the words of its name."""

_SPLIT: Final = re.compile(r"[^a-zA-Z0-9]+|(?<=[a-z0-9])(?=[A-Z])")


def _words(name: str) -> list[str]:
    """``startDate``, ``start_date``, ``start-date``: ``["start", "date"]``."""
    return [word.lower() for word in _SPLIT.split(name) if word]


def _by_name(name: str, table: Mapping[str, Any]) -> Any:
    """The table's value for the whole name, else for its last word that has one."""
    words = _words(name)
    joined = "".join(words)
    if joined in table:
        return table[joined]
    return next((table[word] for word in reversed(words) if word in table), None)


def _string(schema: Mapping[str, Any], name: str) -> str:
    value = _FORMATS.get(str(schema.get("format", "")).lower()) or _by_name(name, _WORDS)
    if not isinstance(value, str):
        words = _words(name)
        singular = [w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words]
        value = "example " + " ".join(singular) if words else "example"
    low, high = schema.get("minLength"), schema.get("maxLength")
    if isinstance(low, int) and len(value) < low:
        value = (value + "-" + "x" * low)[:low]
    if isinstance(high, int) and high >= 0 and len(value) > high:
        value = value[:high]
    return value


def _number(schema: Mapping[str, Any], name: str, integer: bool) -> int | float:
    """The name's number (else 3, or 1.5), moved within the schema's bounds."""
    found = _by_name(name, _NUMBERS)
    value: float = float(found) if found is not None else (3 if integer else 1.5)
    step = 1.0 if integer else 0.5
    low, high = schema.get("minimum"), schema.get("maximum")
    low_open, high_open = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if isinstance(low_open, bool):  # draft 4: a flag on minimum
        low_open = low if low_open else None
    if isinstance(high_open, bool):
        high_open = high if high_open else None
    floor = max((b for b in (low, low_open) if isinstance(b, int | float)), default=None)
    ceiling = min((b for b in (high, high_open) if isinstance(b, int | float)), default=None)
    if floor is not None and (value < floor or (floor == low_open and value <= floor)):
        value = floor if floor != low_open else floor + step
        if ceiling is not None and value >= ceiling:
            value = (floor + ceiling) / 2
    if ceiling is not None and (value > ceiling or (ceiling == high_open and value >= ceiling)):
        value = ceiling if ceiling != high_open else ceiling - step
        if floor is not None and value <= floor:
            value = (floor + ceiling) / 2
    if integer:
        whole = math.ceil(value) if floor is not None and value < floor + 1 else math.floor(value)
        return int(whole)
    return value


def _count(value: Any) -> int | None:
    """A count keyword's value: an int, or the decimal string Gemini's int64 fields take."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit() and len(value) <= 18:
        return int(value)
    return None


def _pointer(root: Any, ref: str) -> Any:
    """What a same-document ``$ref`` (``#``, ``#/$defs/Name``) points to, else ``{}``."""
    if not ref.startswith("#") or ref[1:2] not in ("", "/"):  # no anchors, no other documents
        return {}
    node = root
    for token in ref[1:].split("/")[1:]:
        key = unquote(token).replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return {}
    return node


def _kind(schema: Mapping[str, Any], minimal: bool) -> str:
    kind = schema.get("type")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if isinstance(kind, list):
        names = [str(k).lower() for k in kind]
        kind = (
            "null"
            if minimal and "null" in names
            else next((k for k in names if k != "null"), "null")
        )
    return str(kind).lower()


class _Maker:
    """One value for one schema: ``$ref`` resolved against the root, bounded in work, size
    and depth; once a ``$ref`` has nested inside itself, values go minimal (required
    properties only, ``minItems`` items, the null or non-recursive branch) so recursion ends."""

    def __init__(self, root: Any, *, every: bool) -> None:
        self.root = root
        self.every = every
        self.work = 0
        self.size = 0
        self.active: dict[str, int] = {}
        self.sizes: dict[int, int] = {}
        self.repeats = 0

    def charge(self, work: int = 1, size: int = 0) -> None:
        self.work += work
        self.size += size
        if self.work > _MAX_WORK or self.size > _MAX_SIZE:
            raise SchemaTooComplex(TOO_COMPLEX)

    def value(self, schema: Any, name: str, depth: int) -> Any:
        self.charge()
        if depth > _MAX_DEPTH:
            raise SchemaTooComplex(TOO_COMPLEX)
        if not isinstance(schema, Mapping):
            return self.scalar(_string({}, name))
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self.referred(ref, name, depth)
        if schema.get("enum"):
            return self.scalar(schema["enum"][0])
        for key in ("const", "default"):
            if key in schema:
                return self.scalar(schema[key])
        examples = schema.get("examples")
        if isinstance(examples, list) and examples:
            return self.scalar(examples[0])
        if "example" in schema:  # OpenAPI's (Gemini's schema type) single example
            return self.scalar(schema["example"])
        if isinstance(schema.get("allOf"), list) and schema["allOf"]:
            return self.value(self.merged(schema), name, depth + 1)
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                return self.value(self.branch(branches), name, depth + 1)
        kind = _kind(schema, self.repeats > 0)
        if kind == "object":
            return self.object(schema, depth)
        if kind == "array":
            return self.array(schema, name, depth)
        if kind in ("integer", "number"):
            return self.scalar(_multiple(schema, _number(schema, name, kind == "integer")))
        if kind == "boolean":
            return self.scalar(True)
        if kind == "null":
            return self.scalar(None)
        low = _count(schema.get("minLength"))
        if low is not None and low > _MAX_SIZE:
            raise SchemaTooComplex(TOO_COMPLEX)
        return self.scalar(_string(schema, name))

    def scalar(self, value: Any) -> Any:
        """A value as is (a schema's own ``default``, say), charged by its size."""
        if isinstance(value, list | dict):
            if id(value) not in self.sizes:  # measured once however often it is used
                self.sizes[id(value)] = len(json.dumps(value, default=str))
            size = self.sizes[id(value)]
        else:
            size = 1 + (len(value) if isinstance(value, str) else 4)
        self.charge(0, size)
        return value

    def referred(self, ref: str, name: str, depth: int) -> Any:
        seen = self.active.get(ref, 0)
        self.active[ref] = seen + 1
        self.repeats += seen > 0
        try:
            self.charge(len(ref))
            return self.value(_pointer(self.root, ref), name, depth + 1)
        finally:
            self.active[ref] = seen
            self.repeats -= seen > 0

    def merged(self, schema: Mapping[str, Any]) -> dict[str, Any]:
        """``allOf``'s branches (and the schema's own keywords) as one schema."""
        out: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        branches = [schema, *schema["allOf"]]
        self.charge(len(branches))
        properties: dict[str, Any] = {}
        required: list[Any] = []
        for branch in branches:
            while isinstance(branch, Mapping) and isinstance(branch.get("$ref"), str):
                self.charge()
                branch = _pointer(self.root, branch["$ref"])
            if not isinstance(branch, Mapping):
                continue
            self.charge(len(branch) + len(branch.get("properties") or ()))
            for key, value in branch.items():
                if key not in ("allOf", "properties", "required"):
                    out.setdefault(key, value)
            if isinstance(branch.get("properties"), Mapping):
                properties.update(branch["properties"])
            if isinstance(branch.get("required"), list):
                required += branch["required"]
        if properties:
            out["properties"] = properties
        if required:
            out["required"] = list(dict.fromkeys(r for r in required if isinstance(r, str)))
        return out

    def branch(self, branches: list[Any]) -> Any:
        """The first branch that is no null (minimal: a null one, else one without a ``$ref``)."""
        head = branches[:_BRANCHES]
        self.charge(len(head))

        def null(branch: Any) -> bool:
            return isinstance(branch, Mapping) and str(branch.get("type")).lower() == "null"

        if self.repeats > 0:
            found = next((b for b in head if null(b)), None)
            found = found or next(
                (b for b in head if isinstance(b, Mapping) and "$ref" not in b), None
            )
            return found if found is not None else branches[0]
        return next((b for b in head if not null(b)), branches[0])

    def object(self, schema: Mapping[str, Any], depth: int) -> dict[str, Any]:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        required = schema.get("required")
        required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
        ordering = schema.get("propertyOrdering", schema.get("property_ordering"))
        names = [n for n in ordering if n in properties] if isinstance(ordering, list) else []
        listed = set(names)
        names += [n for n in properties if n not in listed]
        self.charge(len(names) + len(required))
        if self.every and self.repeats == 0:
            wanted = set(names) | set(required)
        else:
            wanted = set(required) or ({names[0]} if names and not self.every else set())
        extra = schema.get("additionalProperties", True)
        keys = [n for n in names if n in wanted]
        keys += [r for r in dict.fromkeys(required) if r not in properties and extra is not False]
        out: dict[str, Any] = {}
        for key in keys:
            sub = properties.get(key, extra if isinstance(extra, Mapping) else {})
            self.charge(0, len(key) + 4)
            out[key] = self.value(sub, key, depth + 1)
        return out

    def array(self, schema: Mapping[str, Any], name: str, depth: int) -> list[Any]:
        words = _words(name)
        singular = (
            words[-1][:-1] if words and words[-1].endswith("s") and len(words[-1]) > 3 else None
        )
        item_name = singular or name
        low = _count(schema.get("minItems")) or 0
        high = _count(schema.get("maxItems"))
        prefix = schema.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        count = low if self.repeats > 0 else max(1, low, len(prefix))
        if high is not None:
            count = min(count, high)
        items = schema.get("items")
        head = [self.value(sub, item_name, depth + 1) for sub in prefix[:count]]
        rest = count - len(head)
        if rest <= 0 or items is False:
            return head
        before = self.size
        item = self.value(items, item_name, depth + 1)
        self.charge(size=(self.size - before + 1) * (rest - 1))
        return head + [item] * rest


def _multiple(schema: Mapping[str, Any], value: int | float) -> int | float:
    """``value`` moved up to the schema's ``multipleOf`` (when it is a positive integer)."""
    step = schema.get("multipleOf")
    if isinstance(step, int) and not isinstance(step, bool) and step > 0:
        moved = math.ceil(value / step) * step
        return moved if isinstance(value, int) else float(moved)
    return value


def schema_value(schema: Any, name: str = "value") -> Any:
    """A plausible value valid for a JSON schema (Gemini's or OpenAI's): its required
    properties (else its first), types, the first of ``anyOf``/``oneOf`` that is not null,
    ``allOf`` merged, same-document ``$ref`` resolved; the schema's ``enum``, ``const``,
    ``default`` or first ``examples`` entry when it has one; then a value for its
    ``format``, then for ``name`` (the property's), within bounds. Raises
    :class:`SchemaTooComplex` for a schema whose value would be huge or never end."""
    return _Maker(schema, every=False).value(schema, name, 0)


def structured_value(schema: Any) -> Any:
    """Like :func:`schema_value`, with every property filled, as a model answering with
    structured output does (recursion ends with the least the schema allows)."""
    return _Maker(schema, every=True).value(schema, "value", 0)
