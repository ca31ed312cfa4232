"""Retrieval for the offline rule reasoner: the reference MRs of the most similar development rules.

The packaged ``tools/data/reference_mrs.jsonl`` holds the development rules (German and California) with the
MRs AutoMT's M-Agent produced for them (see ``REFERENCE-MRS-NOTICE.txt``). For a new rule, the ``k`` nearest
of them by MiniLM cosine vote, weighted by similarity, on each field of an MR; :meth:`ReferenceRetriever.support`
says how far a candidate MR agrees with that vote. It is one source of an MR's confidence, beside the lexicon
and the validator's checks; it never writes an MR on its own.

Leave-one-out: ``exclude`` takes rule ids (the rule under test and its repeats) that must not vote.

The records' MiniLM vectors are packaged beside them (``reference_mrs.vectors.npz``, written by
``scripts/reference_vectors.py``) with the model's name and a digest of the texts; they are used only when both
match the embedder and the records at hand, and computed otherwise. That spares the first rule a daemon sees
about 1.3 s of embedding on two cores.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cached_property
from importlib import resources

import numpy as np

from tools.common.similarity import Embedder
from tools.rules.models import MRFields, TrafficRule
from tools.rules.ontology import Ontology

__all__ = [
    "VECTORS_FILE",
    "Neighbour",
    "ReferenceRecord",
    "ReferenceRetriever",
    "load_reference_records",
    "packaged_vectors",
    "texts_digest",
    "write_reference_vectors",
]

VECTORS_FILE = "reference_mrs.vectors.npz"

FIELDS = ("road_type", "manipulation", "expected_behavior")


@dataclass(frozen=True)
class ReferenceRecord:
    """A development rule with its reference MRs."""

    id: str
    region: str
    text: str
    mrs: tuple[MRFields, ...]


@dataclass(frozen=True)
class Neighbour:
    """A development rule near the query, with its cosine similarity."""

    record: ReferenceRecord
    similarity: float


def texts_digest(texts: Sequence[str]) -> str:
    """A digest of the texts, in order (what packaged vectors were computed from)."""
    return hashlib.sha256("\x1e".join(texts).encode("utf-8")).hexdigest()


def packaged_vectors(model: str, texts: Sequence[str]) -> np.ndarray | None:
    """The packaged vectors of these texts by this model, or None (another model, other texts, no file)."""
    try:
        raw = resources.files("tools.data").joinpath(VECTORS_FILE).read_bytes()
        with np.load(io.BytesIO(raw), allow_pickle=False) as data:
            if str(data["model"]) != model or str(data["digest"]) != texts_digest(texts):
                return None
            vectors = np.asarray(data["vectors"], dtype=np.float32)
    except (FileNotFoundError, KeyError, ValueError, OSError):
        return None
    return vectors if vectors.shape[0] == len(texts) else None


def write_reference_vectors(embedder: Embedder, path: str | os.PathLike[str]) -> int:
    """Embed the packaged records' texts and write them with the model's name and the texts' digest; returns
    the number of vectors (``scripts/reference_vectors.py``)."""
    texts = [r.text for r in load_reference_records()]
    vectors = np.asarray(embedder.encode(texts), dtype=np.float32)
    np.savez_compressed(path, vectors=vectors, model=np.str_(embedder.name), digest=np.str_(texts_digest(texts)))
    return len(texts)


def load_reference_records() -> list[ReferenceRecord]:
    """The packaged development rules with their reference MRs."""
    text = resources.files("tools.data").joinpath("reference_mrs.jsonl").read_text(encoding="utf-8")
    out = []
    for line in text.splitlines():
        if line.strip():
            row = json.loads(line)
            mrs = tuple(MRFields(**m) for m in row["reference_parsed"])
            out.append(ReferenceRecord(id=row["id"], region=row["region"], text=row["text"], mrs=mrs))
    return out


class ReferenceRetriever:
    """Nearest development rules of a rule, and how far an MR agrees with their reference MRs.

    Args:
        ontology: For canonical terms (the scorer's rule: the longest ontology term in a phrase).
        embedder: MiniLM (or any :class:`Embedder`).
        records: Development rules (the packaged ones by default).
        k: Neighbours that vote.
        min_similarity: Neighbours less similar than this do not vote.
    """

    def __init__(
        self,
        *,
        ontology: Ontology,
        embedder: Embedder,
        records: Sequence[ReferenceRecord] | None = None,
        k: int = 5,
        min_similarity: float = 0.3,
    ) -> None:
        self.ontology = ontology
        self.embedder = embedder
        self.records = list(records) if records is not None else load_reference_records()
        self.k = k
        self.min_similarity = min_similarity

    @cached_property
    def _canonical(self) -> dict[str, list[dict[str, str]]]:
        """Each record's reference MRs as canonical terms of its region (computed once)."""
        out: dict[str, list[dict[str, str]]] = {}
        for r in self.records:
            vocab = self.ontology.vocabulary(r.region)
            out[r.id] = [{f: vocab.canonical(f, getattr(m, f)) for f in FIELDS} for m in r.mrs]  # type: ignore[arg-type]
        return out

    @cached_property
    def _matrix(self) -> np.ndarray:
        texts = [r.text for r in self.records]
        vectors = packaged_vectors(self.embedder.name, texts)
        if vectors is None:
            vectors = np.asarray(self.embedder.encode(texts), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-9)

    def neighbours(self, rule: TrafficRule, *, exclude: Collection[str] = ()) -> list[Neighbour]:
        """The ``k`` most similar development rules of the rule's own region (above ``min_similarity``), most similar
        first. A region's annotators word the same situation their own way (a German oncoming rail vehicle is "an
        oncoming vehicle", de-07), so only its own references vote."""
        if not self.records:
            return []
        q = np.asarray(self.embedder.encode([rule.text]), dtype=np.float32)[0]
        q = q / max(float(np.linalg.norm(q)), 1e-9)
        sims = self._matrix @ q
        out: list[Neighbour] = []
        for i in np.argsort(-sims):
            record = self.records[int(i)]
            if record.id in exclude or record.region != rule.region:
                continue
            if float(sims[i]) < self.min_similarity or len(out) >= self.k:
                break
            out.append(Neighbour(record, float(sims[i])))
        return out

    def support(self, rule: TrafficRule, mr: MRFields, *, exclude: Collection[str] = ()) -> float | None:
        """Similarity-weighted share of the neighbours' reference MRs that agree with ``mr``, per field, averaged
        over the three fields (0..1); ``None`` when no development rule is near enough to vote."""
        return self.support_from(self.neighbours(rule, exclude=exclude), rule.region, mr)

    def support_from(self, neighbours: Sequence[Neighbour], region: str, mr: MRFields) -> float | None:
        """:meth:`support` with the neighbours already found (one embedding per rule, however many MRs)."""
        if not neighbours:
            return None
        vocab = self.ontology.vocabulary(region)
        want = {f: vocab.canonical(f, getattr(mr, f)) for f in FIELDS}  # type: ignore[arg-type]
        agree = dict.fromkeys(FIELDS, 0.0)
        total = 0.0
        for n in neighbours:
            refs = self._canonical[n.record.id]
            for ref in refs:
                w = n.similarity / len(refs)
                total += w
                for f in FIELDS:
                    if ref[f] == want[f]:
                        agree[f] += w
        return round(sum(agree.values()) / (len(FIELDS) * total), 4) if total else None
