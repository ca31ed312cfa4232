"""Keep MetaDrive offline: no asset download, ever.

MetaDrive's engine calls ``BaseEngine.try_pull_asset`` when it starts; without an ``assets`` folder that
downloads a zip from GitHub (and blocks on a file lock). Physics and the top-down renderer need no
assets, so the project replaces the method with a no-op before the first engine starts. The patch is
process-wide and idempotent.
"""

from __future__ import annotations

import logging
import os

__all__ = ["disable_asset_download", "quiet_metadrive"]

_PATCHED = False


def _no_pull() -> None:
    """Stand-in for ``BaseEngine.try_pull_asset``: nothing to fetch in a physics-only, headless run."""


def disable_asset_download() -> None:
    """Patch MetaDrive so that starting an engine never downloads assets (call before the first reset)."""
    global _PATCHED
    if _PATCHED:
        return
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame draws off-screen, no display needed
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
    from metadrive.engine.base_engine import BaseEngine

    BaseEngine.try_pull_asset = staticmethod(_no_pull)
    _PATCHED = True


def quiet_metadrive() -> None:
    """Silence MetaDrive's INFO logging (it logs every reset)."""
    logging.getLogger("MetaDrive").setLevel(logging.WARNING)
