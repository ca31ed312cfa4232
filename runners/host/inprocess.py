"""In-process runs: a private daemon of the command's own (embedded bus and store in a temporary folder), so
``rules extract``, ``eval rules``, ``crash run`` and ``demo`` push their inputs through the same agents, as
events, that a long-running daemon would."""

from __future__ import annotations

import contextlib
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.mr_store import StoreSettings
from runners.clients.crash import CrashBatch, submit_crashes
from runners.clients.crash import ProgressFn as CrashProgressFn
from runners.clients.mt import CaseResults, case_submissions, report_outcome, submit_cases_and_collect
from runners.clients.rules import RunSummary, submit_and_collect
from runners.config import DrivemtConfig
from runners.host.daemon import Daemon
from tools.common.artifacts import LocalArtifactStore
from tools.common.similarity import Embedder
from tools.crash.files import CrashReport
from tools.crash.models import SimOptions
from tools.mt.report import GenerationResult
from tools.rules.models import TrafficRule

__all__ = [
    "GenerationRun",
    "private_daemon",
    "run_crashes_in_process",
    "run_generation_in_process",
    "run_rules_in_process",
]

ProgressFn = Callable[[int, int], None]


async def run_rules_in_process(
    config: DrivemtConfig,
    rules: Sequence[TrafficRule],
    *,
    timeout: float = 600.0,
    on_progress: ProgressFn | None = None,
    store_dir: Path | None = None,
    embedder: Embedder | None = None,
    model_clients: Mapping[str, Any] | None = None,
    source: str | None = None,
) -> RunSummary:
    """Run the rule agents on a private embedded bus and return every rule's result.

    Args:
        config: Configuration (its LLM and validation settings apply; bus and store are private).
        rules: The rules.
        timeout: Seconds to wait for all results.
        on_progress: Called with (done, total).
        store_dir: Keep the MR store here (a temporary folder otherwise).
        embedder: Share a loaded embedder.
        model_clients: Model clients by label (tests).
        source: Where the rules came from.
    """
    async with private_daemon(
        config, embedder=embedder, model_clients=model_clients, store_dir=store_dir, prefix="drivemt-run-"
    ) as daemon:
        assert daemon.bus is not None
        return await submit_and_collect(daemon.bus, rules, timeout=timeout, on_progress=on_progress, source=source)


@contextlib.asynccontextmanager
async def private_daemon(
    config: DrivemtConfig,
    *,
    embedder: Embedder | None = None,
    model_clients: Mapping[str, Any] | None = None,
    store_dir: Path | None = None,
    prefix: str = "drivemt-",
    **updates: Any,
) -> AsyncIterator[Daemon]:
    """A daemon of this command's own: embedded bus and store in a temporary folder, no state file.

    Args:
        config: Configuration (its agents, LLM and validation settings apply; bus and store are private).
        embedder: Share a loaded embedder.
        model_clients: Model clients by label (tests).
        store_dir: Keep the MR store here (the temporary folder otherwise).
        prefix: Name prefix of the temporary folder.
        **updates: Further configuration fields to replace (e.g. ``agents``, ``artifacts_dir``).
    """
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        private = config.model_copy(update={"data_dir": Path(tmp), "nats_url": None, "qdrant_url": None, **updates})
        store = StoreSettings(path=store_dir or Path(tmp) / "qdrant")
        async with Daemon(
            private, embedder=embedder, model_clients=model_clients, store_settings=store, write_state_file=False
        ) as daemon:
            yield daemon


async def run_crashes_in_process(
    config: DrivemtConfig,
    reports: Sequence[CrashReport],
    *,
    simulate: SimOptions | None,
    workers: int = 1,
    timeout: float = 3600.0,
    on_progress: CrashProgressFn | None = None,
    embedder: Embedder | None = None,
    source: str | None = None,
) -> CrashBatch:
    """Run the crash agents on a private embedded bus with ``workers`` simulator processes.

    Run artefacts go to the configuration's runs folder (they outlive the private bus).
    """
    agents = config.agents.model_copy(deep=True)
    agents.sim_runner.copies = max(1, workers)
    async with private_daemon(
        config, embedder=embedder, prefix="drivemt-crash-", agents=agents, artifacts_dir=config.runs_dir
    ) as daemon:
        assert daemon.bus is not None
        return await submit_crashes(
            daemon.bus, reports, simulate=simulate, timeout=timeout, on_progress=on_progress, source=source
        )


@dataclass
class GenerationRun:
    """What ``drivemt mt generate`` came to."""

    batch: str
    results: list[GenerationResult]
    figures: dict[str, Any]
    report: Path | None
    problems: list[str]
    rules: RunSummary | None


async def run_generation_in_process(
    config: DrivemtConfig,
    cases_path: Path,
    *,
    region: str,
    method: str = "automt",
    rules: Sequence[TrafficRule] = (),
    seed: int = 0,
    timeout: float = 3600.0,
    on_progress: ProgressFn | None = None,
    embedder: Embedder | None = None,
    model_clients: Mapping[str, Any] | None = None,
    write_report: bool = True,
) -> GenerationRun:
    """Rules -> MRs -> descriptions -> follow-ups -> validity, on a private bus; artefacts under the runs folder.

    Args:
        config: Configuration (its ``runs_dir`` receives the cases, follow-ups and the report).
        cases_path: A recording or dataset (Udacity, A2D2, a folder, a drivemt synthetic set).
        region: The ontology region of the rules and the cases.
        method: automt, manual, random or null.
        rules: Traffic rules whose MRs the ``automt`` method draws from.
        seed: Seed of the draws and placements.
        timeout: Seconds to wait for every case.
        on_progress: Called with (cases done, cases).
        embedder: Share a loaded embedder.
        model_clients: Model clients by label (tests).
        write_report: Write the HTML report.
    """
    started = time.perf_counter()
    store = LocalArtifactStore(config.runs_dir)
    async with private_daemon(
        config, embedder=embedder, model_clients=model_clients, prefix="drivemt-mt-", artifacts_dir=config.runs_dir
    ) as daemon:
        assert daemon.bus is not None
        summary = await submit_and_collect(daemon.bus, rules, timeout=timeout, source="mt generate") if rules else None
        batch, events, loaded = case_submissions(store, cases_path, region=region, method=method, seed=seed)
        problems = [str(p) for p in loaded.problems]
        outcome = (
            await submit_cases_and_collect(daemon.bus, events, timeout=timeout, on_progress=on_progress)
            if events
            else CaseResults([])
        )
    results, figures, ref = report_outcome(
        store, outcome, batch=batch, seconds=time.perf_counter() - started, write=write_report
    )
    report = store.local_path(ref) if ref else None
    return GenerationRun(batch, results, figures, report, problems, summary)
