"""Reading traffic rules from files (one rule per line, or JSON lines)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from tools.errors import BadInputError
from tools.rules.models import TrafficRule

__all__ = ["read_rules_file"]


def read_rules_file(path: Path, *, region: str) -> Iterator[TrafficRule]:
    """Read rules from a ``.txt`` file (one rule per line) or ``.jsonl`` (objects with ``text``, optional ``id``).

    Line numbers become ids where a rule has none (``<file stem>-<line>``). A JSON object's own
    ``region`` wins over ``region``.

    Raises:
        BadInputError: For an unreadable file, a non-UTF-8 file, an unknown suffix or a bad JSON line.
    """
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BadInputError(f"cannot read rules file {path}: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInputError(f"rules file {path} is not UTF-8 text (byte {exc.start})") from exc
    suffix = path.suffix.lower()
    if suffix not in {".txt", ".jsonl"}:
        raise BadInputError(f"rules file {path}: expected .txt (one rule per line) or .jsonl")
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        default_id = f"{path.stem}-{lineno}"
        if suffix == ".txt":
            yield TrafficRule(id=default_id, text=line.strip(), region=region)
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadInputError(f"{path}:{lineno}: not a JSON object: {exc.msg}") from exc
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            raise BadInputError(f"{path}:{lineno}: expected an object with a string 'text'")
        yield TrafficRule(
            id=str(obj.get("id") or default_id),
            text=obj["text"],
            region=str(obj.get("region") or region),
        )
