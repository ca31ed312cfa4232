"""Processes and adapters: configuration, the daemon, in-process runs, the CLI, and the simulators.

Modules are imported by name (``runners.daemon`` ...); nothing heavy loads with the package itself.
"""

from runners.errors import DaemonRunningError

__all__ = ["DaemonRunningError"]
