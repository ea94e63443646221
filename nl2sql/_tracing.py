"""OpenTelemetry spans for tool calls, asks and queries, exported when an OTel SDK is configured.

nl2sql writes spans through the OpenTelemetry API (a dependency of the MCP SDK): without a
configured SDK they cost next to nothing and go nowhere. A console script configures the SDK
from the standard variables (``configure_from_environment``) when they ask for export:
``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` (OTLP over HTTP) or
``OTEL_TRACES_EXPORTER`` (``otlp``, ``console``: JSON on stderr, ``none``), with
``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` as usual and ``OTEL_SDK_DISABLED=true``
switching it off. The SDK is the ``otel`` extra, imported only then. A program using the Python
API configures its own SDK (a global tracer provider): nl2sql's spans go there. Model requests
get pydantic-ai's own spans once tracing is on (``nl2sql.llm.runs``), without the prompts' and
answers' text (``include_content=False``: they can hold query results).

Spans: ``nl2sql.tool <name>`` (an MCP tool, resource or prompt, an agent's tool), ``nl2sql.ask``,
``nl2sql.query`` (one query on a database); attributes ``nl2sql.user``, ``nl2sql.face``,
``db.namespace`` (the db_id), ``db.system.name``, ``db.query.text``, ``nl2sql.outcome``.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace

logger = logging.getLogger(__name__)

_tracer = trace.get_tracer("nl2sql")
_EXPORT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                     "OTEL_TRACES_EXPORTER")


@contextmanager
def span(name: str, **attributes: Any) -> Iterator[trace.Span]:
    """A span around the block (attributes that are None are left out); an exception leaving
    the block is recorded on it. Without a configured tracer provider, nothing: the API's
    no-op span would still build its attributes and switch the context on every call."""
    if not tracing_enabled():
        yield trace.INVALID_SPAN
        return
    with _tracer.start_as_current_span(
            name, attributes={key.replace("__", "."): value for key, value in attributes.items()
                              if value is not None}) as current:
        yield current


def tracing_enabled() -> bool:
    """A tracer provider is configured (by ``configure_from_environment`` or the program)."""
    return not isinstance(trace.get_tracer_provider(),
                          (trace.ProxyTracerProvider, trace.NoOpTracerProvider))


def configure_from_environment(service_name: str) -> bool:
    """Set up the OTel SDK from the ``OTEL_*`` variables when they ask for export and no
    provider is configured yet; True when spans are exported."""
    if os.environ.get("OTEL_SDK_DISABLED", "").lower() == "true" or tracing_enabled():
        return tracing_enabled()
    exporter_name = os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if not any(os.environ.get(name) for name in _EXPORT_VARIABLES) or exporter_name == "none":
        return False
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (BatchSpanProcessor, ConsoleSpanExporter,
                                                    SimpleSpanProcessor)
    except ImportError:
        logger.warning("OTEL_* variables are set but the OpenTelemetry SDK is not installed; "
                       "install it with: pip install 'nl2sql[otel]' (no spans are exported)")
        return False
    resource = Resource.create({"service.name": os.environ.get("OTEL_SERVICE_NAME",
                                                               service_name)})
    provider = TracerProvider(resource=resource)
    if exporter_name == "console":  # stdout belongs to MCP over stdio
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
    else:
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            logger.warning("OTLP export needs opentelemetry-exporter-otlp-proto-http; install "
                           "it with: pip install 'nl2sql[otel]' (no spans are exported)")
            return False
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return True


def shutdown() -> None:
    """Export what is still buffered (at the end of a command)."""
    provider = trace.get_tracer_provider()
    flush = getattr(provider, "shutdown", None)
    if callable(flush):
        flush()
