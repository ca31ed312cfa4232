"""The ``drivemt`` command line (typer).

Heavy modules (torch, sentence-transformers, qdrant-client, autogen) load inside the commands that
need them, so ``drivemt --help`` answers at once.
"""

from __future__ import annotations

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
from runners.cli._common import data_app, submit_app

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
    """Console-script entry point."""
    app()
