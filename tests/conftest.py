"""Shared fixtures: one real nats-server per test session, a namespace per test, the real MiniLM model."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import asyncio
import signal
import sys

from bus import Bus, EmbeddedNatsServer, Subjects
from memory.embeddings import MiniLMEmbedder
from runners.config import DrivemtConfig, load_config
from tests.helpers import FIXTURES
from tools.rules.ontology import Ontology, load_ontology


def _dump_tasks(signum: int, frame: object) -> None:
    """On SIGUSR1, write the stack of every pending asyncio task to a file (pytest captures stderr, and threads
    alone do not show a hung await): ``$DRIVEMT_TASK_DUMP`` or ``<tmp>/drivemt-tasks-<pid>.txt``."""
    import tempfile

    path = os.environ.get("DRIVEMT_TASK_DUMP") or os.path.join(
        tempfile.gettempdir(), f"drivemt-tasks-{os.getpid()}.txt"
    )
    with open(path, "w", encoding="utf-8") as out:
        for task in list(asyncio.tasks._all_tasks):
            if not task.done():
                print(f"--- {task.get_name()}", file=out)
                task.print_stack(file=out)
    print(f"asyncio tasks written to {path}", file=sys.__stderr__)


if hasattr(signal, "SIGUSR1"):
    signal.signal(signal.SIGUSR1, _dump_tasks)


@pytest.fixture(scope="session")
def nats_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a real nats-server with JetStream, shared by the session (tests use their own namespaces)."""
    import asyncio

    root = tmp_path_factory.mktemp("nats")
    server = EmbeddedNatsServer(store_dir=root / "jetstream")
    url = asyncio.run(server.start())
    yield url
    asyncio.run(server.stop())


@pytest.fixture
def namespace() -> str:
    """A namespace of this test's own, so subjects and streams never collide."""
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture
def subjects(namespace: str) -> Subjects:
    """Subjects of this test's namespace."""
    return Subjects(namespace)


@pytest.fixture
async def bus(nats_url: str, subjects: Subjects) -> AsyncIterator[Bus]:
    """A connected bus with this test's streams."""
    b = Bus(url=nats_url, subjects=subjects, name="pytest")
    await b.connect()
    await b.ensure_streams()
    yield b
    await b.close()


@pytest.fixture(scope="session")
def embedder() -> MiniLMEmbedder:
    """The real MiniLM embedder, loaded once."""
    e = MiniLMEmbedder()
    e.ensure_loaded()
    return e


@pytest.fixture(scope="session")
def ontology() -> Ontology:
    """The packaged ontology."""
    return load_ontology()


@pytest.fixture
def config(tmp_path: Path, nats_url: str, namespace: str) -> DrivemtConfig:
    """A configuration on the session's server, in this test's namespace and data dir."""
    return load_config(
        data_dir=tmp_path / "data",
        nats_url=nats_url,
        namespace=namespace,
        heartbeat_interval_s=0.5,
        shutdown_grace_s=5.0,
    )


@pytest.fixture(scope="session")
def sample_rules() -> list[dict[str, object]]:
    """Twelve German rules with AutoMT's reference MRs."""
    return [json.loads(line) for line in (FIXTURES / "rules_de_sample.jsonl").read_text().splitlines() if line.strip()]
