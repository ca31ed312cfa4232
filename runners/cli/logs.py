"""structlog configuration, done once at process start.

Agents bind their context per event (agent, subject, event id, correlation id) with
``structlog.contextvars``; the JSON renderer puts it on every line.
"""

from __future__ import annotations

import logging
import sys
from typing import Literal

import structlog

__all__ = ["configure_logging"]

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


class _CurrentStderr:
    """Writes to whatever ``sys.stderr`` is at the time of writing.

    A stream captured at configure time may be closed later (a test runner's capture, a CLI runner's
    buffer), and a pipe's reader may be gone (a daemon whose parent died): an agent, or a signal handler, must never
    fail because its log line had nowhere to go. Such a line is dropped.
    """

    def write(self, text: str) -> int:
        try:
            return sys.stderr.write(text)
        except (OSError, ValueError):  # a broken pipe, or a closed stream
            return 0

    def flush(self) -> None:
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass


def configure_logging(level: str = "info", fmt: Literal["json", "console"] = "json") -> None:
    """Configure structlog (and stdlib logging beneath it) for this process.

    Args:
        level: Least level shown.
        fmt: ``json`` (one object per line, for machines) or ``console`` (for people).
    """
    lvl = _LEVELS.get(level, logging.INFO)
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if fmt == "json"
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.StackInfoRenderer(),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(lvl),
        logger_factory=structlog.PrintLoggerFactory(file=_CurrentStderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(
        level=max(lvl, logging.WARNING), stream=_CurrentStderr(), format="%(levelname)s %(name)s: %(message)s"
    )
    for noisy in ("httpx", "autogen_core", "autogen_core.events", "autogen_agentchat", "sentence_transformers", "nats"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
