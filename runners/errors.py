"""Errors of the runners package (daemon, CLI, in-process runs)."""

from __future__ import annotations

from tools.errors import DrivemtError

__all__ = ["DaemonRunningError", "RunnerError"]


class RunnerError(DrivemtError):
    """A daemon or command failure."""


class DaemonRunningError(RunnerError):
    """A second daemon started on a data dir whose daemon is alive."""

    def __init__(self, data_dir: str, pid: int, url: str) -> None:
        self.data_dir = data_dir
        self.pid = pid
        self.url = url
        super().__init__(
            f"a drivemt daemon (pid {pid}, bus {url}) already runs on {data_dir}; "
            "use it (`drivemt submit`, `drivemt status`), stop it (`drivemt stop`), or pick another --data-dir"
        )
