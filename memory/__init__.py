"""Memory: the Qdrant MR store and the MiniLM embedder."""

from memory.embeddings import MiniLMEmbedder
from memory.errors import EmbeddingModelError, MemoryError_, StoreLockedError
from memory.mr_store import MRStore, QdrantMRStore, SearchHit, StoreSettings, point_id
from tools.rules.models import NewMR

__all__ = [
    "EmbeddingModelError",
    "MRStore",
    "MemoryError_",
    "MiniLMEmbedder",
    "NewMR",
    "QdrantMRStore",
    "SearchHit",
    "StoreLockedError",
    "StoreSettings",
    "point_id",
]
