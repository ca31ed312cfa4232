"""The console's panes, one module each; the app (:mod:`tui.app`) owns the bus, the state and the input line.

Each pane draws from the app's bounded :class:`tui.state.ConsoleState` when the app's refresh finds it changed, and
keeps the widget ids the tests and the docs name (``#log``, ``#violations``, ``#agents``, ``#mrs``, ``#batches``).
"""

from tui.widgets.agents import AgentsPane
from tui.widgets.batches import BatchesPane
from tui.widgets.conversation import ConversationPane
from tui.widgets.memory import MemoryPane
from tui.widgets.violations import ViolationsPane

__all__ = ["AgentsPane", "BatchesPane", "ConversationPane", "MemoryPane", "ViolationsPane"]
