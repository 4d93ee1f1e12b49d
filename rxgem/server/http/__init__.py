"""The request's HTTP form, read sans-IO: the ``Host`` names answered and the JSON
content type (``_hosts``), a body's bounds and decoding (``_body``), and where each
request head on a connection begins and ends (``_head_meter``).
"""

from __future__ import annotations

from ._body import BodyError, json_object_steps
from ._head_meter import HeadMeter
from ._hosts import HostCheck, is_json, normalize_allowed_hosts

__all__ = [
    "BodyError",
    "HeadMeter",
    "HostCheck",
    "is_json",
    "json_object_steps",
    "normalize_allowed_hosts",
]
