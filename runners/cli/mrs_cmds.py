"""``drivemt mrs list|search|export|import``: the MR memory.

With a daemon running (found by --nats-url or the data dir's state) these ask it over the bus, since
Qdrant local mode allows one process per store; otherwise they open the data dir's store themselves.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import BaseModel
from rich.table import Table

from bus.rpc import RpcMethod
from bus.services import (
    MRS_IMPORT,
    MRS_LIST,
    MRS_SEARCH,
    ImportedMR,
    ImportMRs,
    ListMRs,
    MRFilters,
    SearchMRs,
)
from runners.cli._common import (
    ConfigOpt,
    DataDirOpt,
    NatsUrlOpt,
    QdrantUrlOpt,
    connect_bus,
    console,
    err_console,
    fail,
    make_config,
    run_async,
)
from runners.config import DrivemtConfig

Req = TypeVar("Req", bound=BaseModel)
Resp = TypeVar("Resp", bound=BaseModel)

__all__ = ["register"]

mrs_app = typer.Typer(help="Metamorphic relations in memory.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add the commands to the app."""
    app.add_typer(mrs_app, name="mrs")


async def _call(cfg: DrivemtConfig, method: RpcMethod[Req, Resp], request: Req) -> Resp:
    """Ask the running daemon over the bus, or (with none running) the same service on the data dir's store."""
    from bus import NoDaemonError
    from bus.rpc import call
    from runners.clients.discovery import find_bus_url

    try:
        url = find_bus_url(cfg)
    except NoDaemonError:
        url = None
    if url is not None:
        async with connect_bus(cfg, name="drivemt-mrs", url=url) as bus:
            return await call(bus, method, request, timeout=60.0)
    if method.name != MRS_IMPORT.name and not cfg.qdrant_url and not cfg.qdrant_path.exists():
        # (reading must not create an empty store in a mistyped data dir and report it as having no MRs)
        raise fail(
            f"no daemon runs on {cfg.data_dir} and it holds no MR store ({cfg.qdrant_path}): check --data-dir, or "
            "start `drivemt daemon` and submit rules"
        )
    from memory.embeddings import MiniLMEmbedder
    from memory.mr_store import QdrantMRStore, StoreSettings
    from runners.config import qdrant_api_key
    from runners.host.services import MRService
    from tools.rules.ontology import load_ontology

    store = QdrantMRStore(
        settings=StoreSettings(path=cfg.qdrant_path, url=cfg.qdrant_url, api_key=qdrant_api_key()),
        embedder=MiniLMEmbedder(device=cfg.embedder.device),
    )
    async with store:
        service = MRService(store=store, ontology=load_ontology(cfg.ontology_files))
        handlers: dict[str, Any] = {
            MRS_LIST.name: service.list_mrs,
            MRS_SEARCH.name: service.search,
            MRS_IMPORT.name: service.import_mrs,
        }
        result: Resp = await handlers[method.name](request)
        return result


def _filters(road_type: str | None, behavior: str | None, region: str | None) -> MRFilters:
    return MRFilters(road_type=road_type, expected_behavior=behavior, region=region)


RoadTypeOpt = Annotated[
    str | None, typer.Option("--road-type", help="Only this canonical road type (e.g. 'intersection').")
]
BehaviorOpt = Annotated[str | None, typer.Option("--behavior", help="Only this expected behaviour.")]
RegionFilterOpt = Annotated[str | None, typer.Option("--region", help="Only MRs first made for this region.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON lines.")]


@mrs_app.command("list")
def mrs_list(
    limit: Annotated[int, typer.Option(help="Most MRs shown.")] = 100,
    offset: Annotated[int, typer.Option(help="Skip this many.")] = 0,
    road_type: RoadTypeOpt = None,
    behavior: BehaviorOpt = None,
    region: RegionFilterOpt = None,
    json_out: JsonOpt = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    nats_url: NatsUrlOpt = None,
    qdrant_url: QdrantUrlOpt = None,
) -> None:
    """List stored MRs, oldest first."""
    cfg = make_config(config=config, data_dir=data_dir, nats_url=nats_url, qdrant_url=qdrant_url)
    req = ListMRs(limit=limit, offset=offset, filters=_filters(road_type, behavior, region))
    records = run_async(lambda: _call(cfg, MRS_LIST, req)).mrs
    if json_out:
        for r in records:
            print(r.model_dump_json())
        return
    table = Table(title=f"{len(records)} MR(s)", title_justify="left")
    for col in ("MR", "score", "rules", "executions", "id"):
        table.add_column(col, overflow="fold")
    for r in records:
        table.add_row(r.gherkin, f"{r.score:.2f}", ", ".join(r.source_rule_ids), str(r.execution_count), r.mr_id[:8])
    console.print(table)


@mrs_app.command("search")
def mrs_search(
    query: Annotated[str, typer.Argument(help="What to look for, e.g. 'pedestrian at a crosswalk'.")],
    limit: Annotated[int, typer.Option(help="Most results.")] = 10,
    road_type: RoadTypeOpt = None,
    behavior: BehaviorOpt = None,
    region: RegionFilterOpt = None,
    json_out: JsonOpt = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    nats_url: NatsUrlOpt = None,
    qdrant_url: QdrantUrlOpt = None,
) -> None:
    """Find the MRs most similar to a query (MiniLM embeddings), optionally filtered."""
    cfg = make_config(config=config, data_dir=data_dir, nats_url=nats_url, qdrant_url=qdrant_url)
    try:
        req = SearchMRs(query=query.strip(), limit=limit, filters=_filters(road_type, behavior, region))
    except ValueError as exc:
        raise fail(f"search needs a query: {exc}") from exc
    hits = run_async(lambda: _call(cfg, MRS_SEARCH, req)).hits
    if json_out:
        for h in hits:
            print(h.model_dump_json())
        return
    table = Table(title=f"{len(hits)} result(s) for {query!r}", title_justify="left")
    for col in ("similarity", "MR", "score", "rules"):
        table.add_column(col, overflow="fold")
    for h in hits:
        r = h.mr
        table.add_row(f"{h.similarity:.3f}", r.gherkin, f"{r.score:.2f}", ", ".join(r.source_rule_ids))
    console.print(table)


@mrs_app.command("export")
def mrs_export(
    fmt: Annotated[str, typer.Option("--format", help="Export format: feature (Gherkin files) or jsonl.")] = "feature",
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder (feature: one file per region) or file (jsonl).")
    ] = Path("mrs-export"),
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    nats_url: NatsUrlOpt = None,
    qdrant_url: QdrantUrlOpt = None,
) -> None:
    """Export every MR: Gherkin .feature files a person can review, edit and import back."""
    cfg = make_config(config=config, data_dir=data_dir, nats_url=nats_url, qdrant_url=qdrant_url)
    mrs = run_async(lambda: _call(cfg, MRS_LIST, ListMRs(limit=10_000_000))).mrs
    if fmt == "jsonl":
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(m.model_dump_json() + "\n" for m in mrs), encoding="utf-8")
        console.print(f"{len(mrs)} MR(s) -> {out}")
        return
    if fmt != "feature":
        raise fail(f"unknown format {fmt!r}: use feature or jsonl")
    from tools.rules.feature import write_feature

    regions = sorted({m.region for m in mrs}) or []
    for region in regions:
        path = out / f"mrs-{region}.feature"
        n = write_feature(path, [m for m in mrs if m.region == region], region=region)
        console.print(f"{n} MR(s) -> {path}")
    if not mrs:
        err_console.print("no MRs stored yet")


@mrs_app.command("import")
def mrs_import(
    files: Annotated[
        list[Path], typer.Argument(help=".feature files (as exported, possibly edited).", exists=True, dir_okay=False)
    ],
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    nats_url: NatsUrlOpt = None,
    qdrant_url: QdrantUrlOpt = None,
) -> None:
    """Import MRs from .feature files; each MR's terms are checked against the ontology first."""
    cfg = make_config(config=config, data_dir=data_dir, nats_url=nats_url, qdrant_url=qdrant_url)
    from tools.errors import BadInputError
    from tools.rules.feature import read_feature

    payload = []
    for path in files:
        try:
            for fm in read_feature(path):
                payload.append(
                    ImportedMR(
                        fields=fm.fields, region=fm.region, source=(fm.sources or [f"import:{path.name}:{fm.line}"])[0]
                    )
                )
        except BadInputError as exc:
            raise fail(str(exc)) from exc
    if not payload:
        raise fail("no MRs found in the given files")
    records = run_async(lambda: _call(cfg, MRS_IMPORT, ImportMRs(mrs=payload))).mrs
    new = sum(1 for r in records if not r.duplicate)
    console.print(f"imported {len(records)} MR(s): {new} new, {len(records) - new} already known")
