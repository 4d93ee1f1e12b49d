"""What the server tells of itself: the access log and the error boundary (``_access``),
the metrics and traces of each request (``_telemetry``, through ``_metrics``,
``_tracing`` and the bounded label values of ``_labels``).
"""

from __future__ import annotations

from ._access import AccessLog, AccessRecord, access_record, log_failure
from ._labels import (
    CANCEL_ROUTE,
    CHAT_ROUTE,
    HEALTHZ_ROUTE,
    INPUT_ITEMS_ROUTE,
    METRICS_ROUTE,
    MODEL_ROUTE,
    MODELS_ROUTE,
    READYZ_ROUTE,
    RESPONSE_ROUTE,
    RESPONSES_ROUTE,
)
from ._telemetry import Telemetry

__all__ = [
    "CANCEL_ROUTE",
    "CHAT_ROUTE",
    "HEALTHZ_ROUTE",
    "INPUT_ITEMS_ROUTE",
    "METRICS_ROUTE",
    "MODELS_ROUTE",
    "MODEL_ROUTE",
    "READYZ_ROUTE",
    "RESPONSES_ROUTE",
    "RESPONSE_ROUTE",
    "AccessLog",
    "AccessRecord",
    "Telemetry",
    "access_record",
    "log_failure",
]
