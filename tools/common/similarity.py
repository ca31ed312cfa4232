"""Nearest-label similarity over ontology terms, for any text embedder.

The embedder is injected (the MiniLM one lives in ``memory.embeddings``), so the offline parser and
validator stay testable with any model and never load one themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder", "LabelIndex"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors."""

    @property
    def name(self) -> str:
        """Model name, recorded in provenance."""
        ...

    @property
    def dimension(self) -> int:
        """Vector size."""
        ...

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts as rows of an ``(n, dimension)`` float32 array of unit vectors."""
        ...


class LabelIndex:
    """Unit vectors of a fixed label list, for nearest-label lookups.

    Args:
        embedder: The model that embeds labels and queries alike.
        labels: The labels (ontology terms).
    """

    def __init__(self, embedder: Embedder, labels: Sequence[str]) -> None:
        self.labels = list(labels)
        self._embedder = embedder
        self._vectors = embedder.encode(self.labels) if self.labels else np.zeros((0, embedder.dimension))

    def nearest(self, queries: Sequence[str], *, k: int = 1) -> list[list[tuple[str, float]]]:
        """The ``k`` labels most similar to each query, with cosine similarity."""
        if not queries or not self.labels:
            return [[] for _ in queries]
        q = self._embedder.encode(queries)
        return self.nearest_vectors(q, k=k)

    def nearest_vectors(self, vectors: np.ndarray, *, k: int = 1) -> list[list[tuple[str, float]]]:
        """Like :meth:`nearest` for vectors already embedded."""
        sims = vectors @ self._vectors.T
        out: list[list[tuple[str, float]]] = []
        for row in sims:
            idx = np.argsort(-row)[:k]
            out.append([(self.labels[i], float(row[i])) for i in idx])
        return out
