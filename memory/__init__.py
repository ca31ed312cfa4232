"""Memory: the Qdrant MR store and the MiniLM embedder."""

from memory.embeddings import MiniLMEmbedder
from memory.errors import EmbeddingModelError, MemoryStoreError, StoreLockedError
from memory.mr_store import MRStore, QdrantMRStore, SearchHit, StoreSettings, point_id
from tools.rules.models import NewMR

__all__ = [
    "EmbeddingModelError",
    "MRStore",
    "MemoryStoreError",
    "MiniLMEmbedder",
    "NewMR",
    "QdrantMRStore",
    "SearchHit",
    "StoreLockedError",
    "StoreSettings",
    "point_id",
]
