"""A plausible value for a JSON schema: FakeGemini's tool-call arguments.

What a person reading a fake call expects to see: the schema's own hints first (``enum``,
``const``, ``default``, ``examples``), then a value for its ``format`` (a date, an email, a
URL...), then one for the property's name (a city for ``city``, a country for ``country``),
kept within the schema's bounds (``minimum``/``maximum``, their exclusive forms,
``minLength``/``maxLength``, ``minItems``/``maxItems``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["schema_value"]

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


def schema_value(schema: Any, name: str = "value") -> Any:
    """A plausible value valid for a JSON schema (Gemini's or OpenAI's): its required
    properties (else its first), types, the first of ``anyOf``/``oneOf``/``allOf``; the
    schema's ``enum``, ``const``, ``default`` or first ``examples`` entry when it has one;
    then a value for its ``format``, then for ``name`` (the property's), within bounds."""
    if not isinstance(schema, Mapping):
        return _string({}, name)
    if schema.get("enum"):
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    if "default" in schema:
        return schema["default"]
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        return examples[0]
    if "example" in schema:  # OpenAPI's (Gemini's schema type) single example
        return schema["example"]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return schema_value(schema[key][0], name)
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    kind = str(kind).lower()
    if kind == "object":
        properties = schema.get("properties") or {}
        required = schema.get("required") or list(properties)[:1]
        return {k: schema_value(properties.get(k), k) for k in required if k in properties}
    if kind == "array":
        items = _words(name)
        item = items[-1][:-1] if items and items[-1].endswith("s") and len(items[-1]) > 3 else name
        count = max(1, int(schema.get("minItems", 1)))
        if isinstance(schema.get("maxItems"), int):
            count = min(count, schema["maxItems"])
        return [schema_value(schema.get("items"), item)] * count
    if kind in ("integer", "number"):
        return _number(schema, name, kind == "integer")
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(schema, name)
