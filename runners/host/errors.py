"""Errors of the host: the daemon and in-process runs."""

from __future__ import annotations

from tools.errors import DrivemtError

__all__ = ["DaemonRunningError", "HostError"]


class HostError(DrivemtError):
    """A daemon or in-process run that cannot go on."""


class DaemonRunningError(HostError):
    """A second daemon started on a data dir whose daemon is alive."""

    def __init__(self, data_dir: str, pid: int, url: str) -> None:
        self.data_dir = data_dir
        self.pid = pid
        self.url = url
        super().__init__(
            f"a drivemt daemon (pid {pid}, bus {url}) already runs on {data_dir}; "
            "use it (`drivemt submit`, `drivemt status`), stop it (`drivemt stop`), or pick another --data-dir"
        )
