"""OpenTelemetry spans and metrics of the gateway's chat completions.

Through the API only (a no-op until the application installs an SDK; or give the
:class:`~rxgem.server.observe._telemetry.Telemetry` ``tracer_provider=`` / ``meter_provider=``),
after the GenAI semantic conventions v1.41.0 (the last release inside
open-telemetry/semantic-conventions, which opentelemetry-semantic-conventions 0.66b2
mirrors; they now evolve in open-telemetry/semantic-conventions-genai, whose unreleased
draft renames the client metrics ``gen_ai.client.inference.*``):

- a span per chat completion, ``chat {model}``, kind ``CLIENT`` (toward the model),
  with ``gen_ai.operation.name`` = ``chat``, ``gen_ai.provider.name`` (``gcp.gemini``,
  or ``gcp.vertex_ai`` for an ``aiplatform.googleapis.com`` upstream),
  ``gen_ai.request.model``, ``gen_ai.request.stream``, ``gen_ai.response.model``,
  ``gen_ai.usage.input_tokens``, ``gen_ai.usage.output_tokens``,
  ``gen_ai.usage.reasoning.output_tokens``, ``gen_ai.usage.cache_read.input_tokens``,
  ``gen_ai.response.finish_reasons``, ``gen_ai.response.time_to_first_chunk``,
  ``server.address`` and ``server.port`` of the upstream; on failure ``error.type``
  and the status ``ERROR``. No message text and no exception is recorded (they may
  hold the prompt or a secret).
- the histograms ``gen_ai.client.operation.duration`` (with ``error.type`` on
  failure), ``gen_ai.client.token.usage`` (``gen_ai.token.type`` ``input`` or
  ``output``) and, for streams, ``gen_ai.client.operation.time_to_first_chunk``,
  with the bucket boundaries the conventions advise. ``gen_ai.server.*`` is left out:
  those describe a model server, and the gateway is the model's client here (its span
  is ``CLIENT``); ``gen_ai.client.operation.time_per_output_chunk`` is left out because
  it is recorded per chunk, a few µs each with an SDK: the Prometheus chunk-interval
  histogram measures the same.

``error.type`` is the ``error_type`` given to
:meth:`~rxgem.server.observe._telemetry.RequestTelemetry.end`, else the last upstream error's
kind, else the status (``"429"``) when it is 400 or more.
"""

from __future__ import annotations

from typing import Final
from urllib.parse import urlsplit

from opentelemetry import metrics as otel_metrics
from opentelemetry import trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, TracerProvider
from opentelemetry.util.types import AttributeValue

from ... import __version__
from ...upstreams import upstream_of
from ._labels import looks_like_model
from ._metrics import FIRST_CHUNK_BUCKETS

__all__ = ["GenAI"]

# the boundaries the GenAI conventions advise
_OTEL_DURATION_BUCKETS: Final = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
)  # fmt: skip
_OTEL_TOKEN_BUCKETS: Final = tuple(float(4**i) for i in range(14))  # 1, 4, 16, ... 67108864

_SCOPE: Final = "rxgem.server"
_SCHEMA_URL: Final = "https://opentelemetry.io/schemas/1.41.0"

# attribute and metric names of the GenAI semantic conventions (v1.41.0)
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_PROVIDER_NAME: Final = "gen_ai.provider.name"
GEN_AI_REQUEST_MODEL: Final = "gen_ai.request.model"
GEN_AI_REQUEST_STREAM: Final = "gen_ai.request.stream"
GEN_AI_RESPONSE_MODEL: Final = "gen_ai.response.model"
GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK: Final = "gen_ai.response.time_to_first_chunk"
GEN_AI_USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_REASONING_OUTPUT_TOKENS: Final = "gen_ai.usage.reasoning.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_TOKEN_TYPE: Final = "gen_ai.token.type"
ERROR_TYPE: Final = "error.type"
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"
GEN_AI_CLIENT_OPERATION_DURATION: Final = "gen_ai.client.operation.duration"
GEN_AI_CLIENT_TOKEN_USAGE: Final = "gen_ai.client.token.usage"
GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK: Final = "gen_ai.client.operation.time_to_first_chunk"
PROVIDER_GEMINI: Final = "gcp.gemini"
PROVIDER_VERTEX_AI: Final = "gcp.vertex_ai"

_MAX_SERVERS: Final = 16

Usage = tuple[int | None, int | None, int | None, int | None]
"""Input, output, reasoning and cached tokens (reasoning is part of output, cached of input)."""


class GenAI:
    """A telemetry's tracer and GenAI histograms, and its upstreams' server attributes.

    Args:
        tracer_provider: where spans go (default: OpenTelemetry's global provider).
        meter_provider: where the histograms go (default: the global provider).
    """

    def __init__(
        self, tracer_provider: TracerProvider | None, meter_provider: MeterProvider | None
    ) -> None:
        self._servers: dict[str, dict[str, AttributeValue]] = {}
        self._tracer = trace.get_tracer(_SCOPE, __version__, tracer_provider, _SCHEMA_URL)
        meter = otel_metrics.get_meter(_SCOPE, __version__, meter_provider, _SCHEMA_URL)
        self._duration = meter.create_histogram(
            GEN_AI_CLIENT_OPERATION_DURATION,
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=_OTEL_DURATION_BUCKETS,
        )
        self._tokens = meter.create_histogram(
            GEN_AI_CLIENT_TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=_OTEL_TOKEN_BUCKETS,
        )
        self._first_chunk = meter.create_histogram(
            GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK,
            unit="s",
            description="Time to receive the first chunk of a streamed response.",
            explicit_bucket_boundaries_advisory=FIRST_CHUNK_BUCKETS,
        )

    def server(self, upstream: str | None) -> dict[str, AttributeValue]:
        """``gen_ai.provider.name``, ``server.address`` and ``server.port`` of an upstream."""
        if upstream is None:
            return {GEN_AI_PROVIDER_NAME: PROVIDER_GEMINI}
        attributes = self._servers.get(upstream)
        if attributes is not None:
            return attributes
        attributes = {GEN_AI_PROVIDER_NAME: PROVIDER_GEMINI}
        try:  # urlsplit() raises for a malformed host or port
            split = urlsplit(upstream)
            if split.hostname:
                attributes[SERVER_ADDRESS] = split.hostname
                attributes[SERVER_PORT] = split.port or (443 if split.scheme == "https" else 80)
            attributes[GEN_AI_PROVIDER_NAME] = upstream_of(base_url=upstream).provider
        except ValueError:
            pass
        if len(self._servers) < _MAX_SERVERS:
            self._servers[upstream] = attributes
        return attributes

    def start_chat(
        self,
        model: str | None,
        request_model: str | None,
        server: dict[str, AttributeValue],
        stream: bool,
    ) -> Span:
        """The span of a chat completion with ``model`` (``request_model``: its bounded
        form), sent to ``server`` (:meth:`server`)."""
        attributes: dict[str, AttributeValue] = {
            GEN_AI_OPERATION_NAME: "chat",
            **server,
        }
        if request_model:
            attributes[GEN_AI_REQUEST_MODEL] = request_model
        if stream:
            attributes[GEN_AI_REQUEST_STREAM] = True
        named = model is not None and looks_like_model(model.removeprefix("models/"))
        name = f"chat {model}" if named else "chat"
        return self._tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)

    def end_chat(
        self,
        span: Span,
        server: dict[str, AttributeValue],
        *,
        seconds: float,
        error: str | None,
        usage: Usage | None,
        finish_reasons: tuple[str, ...] | None,
        first_chunk: float | None,
        response_model: str | None,
        labels: tuple[str, str] | None,
    ) -> None:
        """The end of a chat completion's span, and its histograms.

        ``seconds`` since :meth:`start_chat`; ``first_chunk``: the time to the first
        chunk of a stream; ``labels``: the request and response models as bounded
        label values, None when the request named no model.
        """
        input_tokens = output_tokens = reasoning = cached = None
        if usage is not None:
            input_tokens, output_tokens, reasoning, cached = usage
        if span.is_recording():
            attributes: dict[str, AttributeValue] = {}
            if response_model:
                attributes[GEN_AI_RESPONSE_MODEL] = response_model
            for key, value in (
                (GEN_AI_USAGE_INPUT_TOKENS, input_tokens),
                (GEN_AI_USAGE_OUTPUT_TOKENS, output_tokens),
                (GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, reasoning),
                (GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, cached),
            ):
                if value is not None:
                    attributes[key] = value
            if finish_reasons is not None:
                attributes[GEN_AI_RESPONSE_FINISH_REASONS] = finish_reasons
            if first_chunk is not None:
                attributes[GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK] = first_chunk
            if error is not None:
                attributes[ERROR_TYPE] = error
                span.set_status(Status(StatusCode.ERROR, error))
            span.set_attributes(attributes)
        span.end()

        # the metric attributes: bounded, like the Prometheus labels
        common: dict[str, AttributeValue] = {GEN_AI_OPERATION_NAME: "chat", **server}
        if labels is not None:
            common[GEN_AI_REQUEST_MODEL], common[GEN_AI_RESPONSE_MODEL] = labels
        duration = {**common, ERROR_TYPE: error} if error is not None else common
        self._duration.record(seconds, duration)
        if input_tokens is not None:
            self._tokens.record(input_tokens, {**common, GEN_AI_TOKEN_TYPE: "input"})
        if output_tokens is not None:
            self._tokens.record(output_tokens, {**common, GEN_AI_TOKEN_TYPE: "output"})
        if first_chunk is not None:
            self._first_chunk.record(first_chunk, common)
