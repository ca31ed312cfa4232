"""The MR store on real Qdrant local mode with the real MiniLM embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory import MiniLMEmbedder, QdrantMRStore, StoreLockedError, StoreSettings
from tools.rules.models import MRFields, NewMR
from tools.rules.mr import canonical_key
from tools.rules.ontology import Ontology


def new_mr(ontology: Ontology, road: str, verb: str, manip: str, beh: str, rule_id: str, score: float = 0.9) -> NewMR:
    fields = MRFields(road_type=road, verb=verb, manipulation=manip, expected_behavior=beh)  # type: ignore[arg-type]
    vocab = ontology.vocabulary("germany")
    return NewMR(
        fields=fields,
        canonical_key=canonical_key(fields, vocab),
        manipulation_term=vocab.canonical("manipulation", manip),
        road_type_term=vocab.canonical("road_type", road),
        region="germany",
        score=score,
        rule_id=rule_id,
    )


@pytest.fixture
async def store(tmp_path: Path, embedder: MiniLMEmbedder):
    s = QdrantMRStore(settings=StoreSettings(path=tmp_path / "qdrant"), embedder=embedder)
    await s.start()
    yield s
    await s.stop()


async def test_duplicates_merge_their_rules(store: QdrantMRStore, ontology: Ontology) -> None:
    """A second wording of a stored MR adds its rule to source_rule_ids instead of a new point."""
    first = await store.add(
        [new_mr(ontology, "any roads", "replaces", "the weather into fog environment", "slow down", "de-01", 0.8)]
    )
    again = await store.add(
        [
            new_mr(
                ontology, "Any roads", "replaces", "fog environment reducing visibility", "slow down", "de-99", 0.95
            ),
            new_mr(ontology, "any roads", "replaces", "the weather into rain environment", "slow down", "de-03"),
        ]
    )
    assert not first[0].duplicate
    assert again[0].duplicate and again[0].mr_id == first[0].mr_id
    assert again[0].source_rule_ids == ["de-01", "de-99"] and again[0].score == 0.95
    assert not again[1].duplicate
    assert await store.count() == 2
    # Same rule again (a redelivery): nothing changes.
    repeat = await store.add([new_mr(ontology, "any roads", "replaces", "fog environment", "slow down", "de-01")])
    assert repeat[0].source_rule_ids == ["de-01", "de-99"]
    assert await store.count() == 2


async def test_two_wordings_in_one_batch_are_one_mr(store: QdrantMRStore, ontology: Ontology) -> None:
    """Within one batch the second wording is already a duplicate of the first."""
    recs = await store.add(
        [
            new_mr(ontology, "intersection", "adds", "a red light", "slow down", "a"),
            new_mr(ontology, "intersection", "adds", "a steady red light on the roadside", "slow down", "b"),
        ]
    )
    assert [r.duplicate for r in recs] == [False, True]
    assert recs[1].source_rule_ids == ["a", "b"]


async def test_search_filters_and_lists(store: QdrantMRStore, ontology: Ontology) -> None:
    """Search ranks by meaning, filters by payload, and list returns oldest first."""
    await store.add(
        [
            new_mr(ontology, "crosswalk", "adds", "a pedestrian", "slow down", "r1"),
            new_mr(ontology, "intersection", "adds", "a red light", "slow down", "r2"),
            new_mr(ontology, "any roads", "replaces", "the weather into snow environment", "slow down", "r3"),
        ]
    )
    hits = await store.search("someone walking across the zebra crossing", limit=3)
    assert hits[0].record.fields.manipulation == "a pedestrian"
    assert hits[0].similarity > hits[-1].similarity
    only = await store.search("weather", limit=5, road_type="intersection")
    assert [h.record.fields.manipulation for h in only] == ["a red light"]
    listed = await store.list()
    assert [r.source_rule_ids[0] for r in listed] == ["r1", "r2", "r3"]
    assert len(await store.list(expected_behavior="keep current")) == 0


async def test_execution_count(store: QdrantMRStore, ontology: Ontology) -> None:
    """Using an MR for a follow-up case counts an execution."""
    (rec,) = await store.add([new_mr(ontology, "crosswalk", "adds", "a pedestrian", "slow down", "r1")])
    assert await store.increment_execution(rec.mr_id) == 1
    assert await store.increment_execution(rec.mr_id, by=2) == 3
    got = await store.get(rec.mr_id)
    assert got is not None and got.execution_count == 3


async def test_local_store_allows_one_process(tmp_path: Path, embedder: MiniLMEmbedder) -> None:
    """A second opener of a local store gets a clear error telling it to use the daemon."""
    import subprocess
    import sys

    path = tmp_path / "qdrant"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from qdrant_client import QdrantClient; import time; c = QdrantClient(path={str(path)!r}); print('open', flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        store = QdrantMRStore(settings=StoreSettings(path=path), embedder=embedder)
        with pytest.raises(StoreLockedError, match="talk to the running daemon"):
            await store.start()
        await store.stop()
    finally:
        holder.kill()
        holder.wait()
