"""The ``drivemt`` command line (typer).

Heavy modules (torch, sentence-transformers, qdrant-client, autogen) load inside the commands that
need them, so ``drivemt --help`` answers at once.
"""

from __future__ import annotations

import contextlib
import os

import typer

from runners.cli import (
    ads_cmds,
    config_cmds,
    crash_cmds,
    daemon_cmds,
    data_cmds,
    demo_cmds,
    eval_cmds,
    mrs_cmds,
    mt_cmds,
    ontology_cmds,
    rules_cmds,
    tl_cmds,
    tui_cmds,
)
from runners.cli._common import data_app, fail, submit_app

__all__ = ["app", "main"]

app = typer.Typer(
    name="drivemt",
    help=(
        "Test autonomous driving systems without a human in the loop: traffic rules become metamorphic relations, "
        "crash reports become simulated scenarios, traffic-light images are augmented to test detectors."
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
daemon_cmds.register(app)
config_cmds.register(app)
rules_cmds.register(app)
mrs_cmds.register(app)
eval_cmds.register(app)
data_cmds.register(app)
ontology_cmds.register(app)
tui_cmds.register(app)
crash_cmds.register(app)
tl_cmds.register(app)
mt_cmds.register(app)
ads_cmds.register(app)
demo_cmds.register(app)
app.add_typer(submit_app, name="submit")
app.add_typer(data_app, name="data")


def main() -> None:
    """Console-script entry point.

    The last line of defence for people: an error no command turned into a message of its own (a folder given where
    a file goes, a file that is not UTF-8, malformed YAML or JSON, a field of the wrong type) ends in one line that
    names it and exit code 1, not a traceback. ``DRIVEMT_TRACEBACK=1`` shows the traceback instead.
    """
    try:
        app()
    except Exception as exc:
        if os.environ.get("DRIVEMT_TRACEBACK"):
            raise
        raise SystemExit(_exit_for(exc)) from exc


def _exit_for(exc: Exception) -> int:
    """Print one line for an error that reached the top, and return the exit code."""
    if isinstance(exc, OSError) and exc.filename is not None:
        what = exc.strerror or type(exc).__name__
        message = f"{what}: {exc.filename}" + (f" -> {exc.filename2}" if exc.filename2 else "")
    elif isinstance(exc, UnicodeDecodeError):
        message = f"not UTF-8 text ({exc.reason} at byte {exc.start})"
    else:
        message = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
        if not isinstance(exc, (OSError, ValueError)) and type(exc).__module__.split(".")[0] != "yaml":
            message += " (an unexpected error: DRIVEMT_TRACEBACK=1 shows where)"
    with contextlib.suppress(OSError, ValueError):  # (stderr's reader may be gone)
        fail(message)
    return 1
