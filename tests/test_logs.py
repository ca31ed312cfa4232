"""The process's log configuration: a log line with nowhere to go is dropped, never raised into the caller."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
import structlog

from runners.cli.logs import configure_logging


class _BrokenPipe(io.StringIO):
    """A stderr whose reader is gone."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


@pytest.fixture
def configured() -> Iterator[None]:
    saved = structlog.get_config()
    root = logging.getLogger()
    handlers = list(root.handlers)
    configure_logging("info", "json")
    yield
    structlog.configure(**saved)
    root.handlers[:] = handlers


@pytest.mark.parametrize("kind", ["broken pipe", "closed stream"])
def test_a_log_line_with_nowhere_to_go_is_dropped(configured: None, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """An agent, or a daemon's signal handler, logs on: a broken pipe or a closed stderr loses the line, not the
    work (a daemon whose parent died would otherwise lose the SIGTERM that stops it)."""
    stream = _BrokenPipe() if kind == "broken pipe" else io.StringIO()
    if kind == "closed stream":
        stream.close()
    monkeypatch.setattr("sys.stderr", stream)
    structlog.get_logger().info("stopping: finishing in-flight work", signal="SIGTERM")
    structlog.get_logger().warning("still here")
    good = io.StringIO()
    monkeypatch.setattr("sys.stderr", good)
    structlog.get_logger().info("the stream is back")
    assert '"event": "the stream is back"' in good.getvalue()
