"""Errors of the memory package."""

from __future__ import annotations

from tools.errors import DrivemtError

__all__ = ["EmbeddingModelError", "MemoryStoreError", "StoreLockedError"]


class MemoryStoreError(DrivemtError):
    """A failure of the vector store."""


class StoreLockedError(MemoryStoreError):
    """A local Qdrant store already opened by another process (local mode allows one)."""

    def __init__(self, path: str) -> None:
        self.path = path
        super().__init__(
            f"the MR store at {path} is open in another process (Qdrant local mode allows one); "
            "talk to the running daemon instead, or pass --qdrant-url to use a Qdrant server"
        )


class EmbeddingModelError(MemoryStoreError):
    """The embedding model could not be loaded."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"embedding model: {reason}")
