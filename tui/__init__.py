"""The terminal UI (Textual): a bus client that shows the agents at work and injects rules."""

from tui.app import DrivemtApp

__all__ = ["DrivemtApp"]
