"""What the crash extractor may use: the scenario templates, and the offline extractor over them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tools.crash.extract import OfflineCrashExtractor
from tools.crash.templates import ScenarioTemplate

__all__ = ["CrashToolContext"]


@dataclass
class CrashToolContext:
    """What the crash tools may use."""

    templates: Mapping[str, ScenarioTemplate]

    def extractor(self) -> OfflineCrashExtractor:
        """The offline extractor over these templates."""
        return OfflineCrashExtractor(templates=self.templates.__getitem__)
