"""``drivemt ontology propose|proposals|accept``: grow the ontology from rules documents, with a person deciding."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml

from runners.cli._common import ConfigOpt, DataDirOpt, console, fail, make_config, run_async

__all__ = ["register"]

onto_app = typer.Typer(help="The MR ontology.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add the commands to the app."""
    app.add_typer(onto_app, name="ontology")


def _proposals_dir(data_dir: Path) -> Path:
    return data_dir / "ontology" / "proposals"


@onto_app.command("propose")
def propose(
    document: Annotated[Path, typer.Argument(help="A traffic rules document (text).", exists=True, dir_okay=False)],
    region: Annotated[str, typer.Option(help="Region whose vocabulary the proposal extends.")] = "germany",
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Ask the configured LLM which terms the document needs (AutoMT Table I); kept apart until accepted.

    Needs an LLM provider (llm.provider in the config): the offline reasoner cannot invent terms.
    """
    cfg = make_config(config=config, data_dir=data_dir)
    model = cfg.llm.validator or (cfg.llm.parsers[0] if cfg.llm.parsers else None)
    if model is None:
        raise fail("proposing ontology terms needs an LLM: set llm.provider and llm.model in the config")
    from runners.config import api_key_for
    from tools.common.llm import build_model_client
    from tools.rules.llm_ontology import propose_terms
    from tools.rules.ontology import load_ontology

    text = document.read_text(encoding="utf-8", errors="replace")
    ontology = load_ontology(cfg.ontology_files)

    async def main() -> Any:
        client = build_model_client(model, api_key=api_key_for(model))
        return await propose_terms(
            model_client=client, label=model.label, ontology=ontology, region=region, document=text
        )

    proposal = run_async(main)
    if proposal.is_empty():
        console.print("no new terms proposed")
        return
    pid = f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"
    path = _proposals_dir(cfg.data_dir) / f"{pid}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {
        "proposal": pid,
        "model": model.label,
        "source": str(document),
        "region": region,
        region: proposal.as_section(),
    }
    path.write_text(yaml.safe_dump(body, sort_keys=False, allow_unicode=True), encoding="utf-8")
    console.print(f"proposal [bold]{pid}[/] -> {path}\nreview it, then: drivemt ontology accept {pid}")


@onto_app.command("proposals")
def proposals(data_dir: DataDirOpt = None) -> None:
    """List proposals waiting for a decision."""
    cfg = make_config(data_dir=data_dir)
    folder = _proposals_dir(cfg.data_dir)
    files = sorted(folder.glob("*.yaml")) if folder.is_dir() else []
    if not files:
        console.print("no proposals waiting")
    for f in files:
        body = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
        console.print(
            f"[bold]{f.stem}[/] ({body.get('model')}, from {body.get('source')}): {body.get(body.get('region', ''), {})}"
        )


@onto_app.command("accept")
def accept(
    proposal: Annotated[str, typer.Argument(help="Proposal id (see `ontology proposals`).")],
    data_dir: DataDirOpt = None,
) -> None:
    """Accept a proposal: its terms join the ontology of every later run on this data dir."""
    cfg = make_config(data_dir=data_dir)
    src = _proposals_dir(cfg.data_dir) / f"{proposal}.yaml"
    if not src.is_file():
        raise fail(f"no proposal {proposal} in {src.parent}")
    body = yaml.safe_load(src.read_text(encoding="utf-8")) or {}
    region = body.get("region")
    section = body.get(region) if region else None
    if not isinstance(section, dict):
        raise fail(f"proposal {proposal} is malformed")
    from tools.rules.ontology import Ontology, _parse

    accepted_path = cfg.data_dir / "ontology" / "accepted.yaml"
    current = yaml.safe_load(accepted_path.read_text(encoding="utf-8")) if accepted_path.is_file() else {}
    merged = (_parse(current, str(accepted_path)) if current else Ontology(sections={})).extended(
        _parse({region: section}, str(src))
    )
    out: dict[str, Any] = {}
    for name, cats in merged.sections.items():
        sec: dict[str, Any] = {}
        if cats.get("road_type"):
            sec["road_types"] = cats["road_type"]
        adds = {k: cats[k] for k in ("traffic_infrastructure", "object") if cats.get(k)}
        manip: dict[str, Any] = {}
        if adds:
            manip["adds"] = adds
        if cats.get("environment"):
            manip["replaces"] = {"environment": cats["environment"]}
        if manip:
            sec["manipulations"] = manip
        out[name] = sec
    accepted_path.parent.mkdir(parents=True, exist_ok=True)
    accepted_path.write_text(yaml.safe_dump(out, sort_keys=False, allow_unicode=True), encoding="utf-8")
    src.rename(src.with_suffix(".accepted"))
    console.print(f"accepted {proposal} into {accepted_path}; restart daemons to use the new terms")
