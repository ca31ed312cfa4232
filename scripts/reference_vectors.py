"""Rebuild ``tools/data/reference_mrs.vectors.npz``: MiniLM vectors of the packaged development rules.

Run after ``tools/data/reference_mrs.jsonl`` changes (the retriever ignores vectors whose digest no longer
matches the records, and embeds them at first use instead)::

    .venv/bin/python scripts/reference_vectors.py
"""

from __future__ import annotations

from pathlib import Path

from memory.embeddings import MiniLMEmbedder
from tools.rules.retrieval import VECTORS_FILE, write_reference_vectors

if __name__ == "__main__":
    out = Path(__file__).resolve().parents[1] / "tools" / "data" / VECTORS_FILE
    n = write_reference_vectors(MiniLMEmbedder(), out)
    print(f"{n} vectors -> {out} ({out.stat().st_size:,} bytes)")
