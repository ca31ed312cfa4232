"""The package layering of docs/architecture.md, and what `import bus` and `drivemt --help` may load."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "metadrive", "ultralytics", "diffusers", "qdrant_client", "imgaug", "cv2")


def _allowed_tools_module(name: str) -> bool:
    """Modules of tools a bus or TUI module may import: the base error, the domains' models and packages."""
    parts = name.split(".")
    return name in {"tools", "tools.errors"} or (len(parts) == 2) or (len(parts) == 3 and parts[2] == "models")


def test_import_linter_contracts_hold() -> None:
    """The layers contract (cli > tui > host > config > agents > clients > adapters/memory > bus > tools) and the
    forbidden contracts of pyproject.toml are kept."""
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run(
        [str(lint), "--config", str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


@pytest.mark.parametrize("package", ["bus", "tui"])
def test_bus_and_tui_import_only_models_from_tools(package: str) -> None:
    """The bus and the terminal UI import from tools only tools.errors and tools.<domain>.models (and packages)."""
    graph = grimp.build_graph(package, "tools", cache_dir=None)
    bad = sorted(
        f"{importer} -> {imported}"
        for importer in graph.find_descendants(package) | {package}
        for imported in graph.find_modules_directly_imported_by(importer)
        if imported.split(".")[0] == "tools" and not _allowed_tools_module(imported)
    )
    assert not bad, "\n".join(bad)


def _loaded_after(code: str) -> dict[str, list[str]]:
    probe = (
        "import json, sys\n"
        f"{code}\n"
        "print(json.dumps({'heavy': [m for m in %r if m in sys.modules],"
        " 'tools': sorted(m for m in sys.modules if m == 'tools' or m.startswith('tools.'))}))" % (HEAVY,)
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_import_bus_loads_no_domain_logic_and_no_heavy_library() -> None:
    """`import bus` loads from tools only tools.errors and the domains' models, and none of the heavy libraries."""
    loaded = _loaded_after("import bus")
    assert loaded["heavy"] == []
    assert [m for m in loaded["tools"] if not _allowed_tools_module(m)] == []
    assert {"tools.rules.models", "tools.crash.models", "tools.tl.models"} <= set(loaded["tools"])


def test_cli_help_loads_no_heavy_library() -> None:
    """`drivemt --help` imports none of torch, metadrive, ultralytics, diffusers, qdrant_client, imgaug or OpenCV."""
    loaded = _loaded_after(
        "sys.argv = ['drivemt', '--help']\nfrom runners.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass"
    )
    assert loaded["heavy"] == []
