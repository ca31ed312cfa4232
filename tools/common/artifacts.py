"""Artefacts (run records, pictures, GIFs, augmented datasets, reports) behind one store, and the run-folder layout.

Events carry artefact *refs*, never absolute paths: a ref is a relative POSIX key such as
``<batch>/crashes/119839/V1-idm-v0.png``. An :class:`ArtifactStore` turns refs into bytes and back. On
one machine :class:`LocalArtifactStore` keeps them in a folder (``<data dir>/runs``), so a ref is simply a
path under it; for workers on other machines ``runners.clients.objects.ObjectArtifactStore`` keeps them in NATS
JetStream's Object Store, with a local cache (``artifacts: bus``). Tools that need files ask for
:meth:`ArtifactStore.local_path` (one file) or :meth:`ArtifactStore.pull` (a folder), and hand back a folder
they wrote with :meth:`ArtifactStore.push`.

Where each artefact of a batch goes is decided here, by :class:`RunLayout`, and nowhere else.
"""

from __future__ import annotations

import builtins
import os
import shutil
import uuid
from pathlib import Path, PurePosixPath
from typing import Protocol, runtime_checkable

from tools.errors import BadInputError

__all__ = ["ArtifactStore", "BadArtifactRefError", "LocalArtifactStore", "RunLayout", "check_ref"]


class BadArtifactRefError(BadInputError):
    """A ref that is not a relative key inside the store (absolute, empty, or climbing out with ``..``)."""

    def __init__(self, ref: str, reason: str) -> None:
        self.ref = ref
        self.reason = reason
        super().__init__(f"artefact ref {ref!r}: {reason}")


def check_ref(ref: str) -> str:
    """Validate a ref and return it normalised (``a/b/c``).

    Raises:
        BadArtifactRefError: For an empty, absolute or escaping ref.
    """
    if not isinstance(ref, str) or not ref.strip():
        raise BadArtifactRefError(str(ref), "empty")
    if "\\" in ref or "\x00" in ref:
        raise BadArtifactRefError(ref, "only '/' separates parts")
    p = PurePosixPath(ref)
    if p.is_absolute():
        raise BadArtifactRefError(ref, "must be relative to the store")
    parts = [x for x in p.parts if x not in ("", ".")]
    if not parts or ".." in parts:
        raise BadArtifactRefError(ref, "must stay inside the store")
    if any(len(x.encode("utf-8", "surrogatepass")) > 255 for x in parts):
        raise BadArtifactRefError(ref[:300], "a part is longer than 255 bytes (no file system holds that name)")
    if len(ref.encode("utf-8", "surrogatepass")) > 1024:
        raise BadArtifactRefError(ref[:300], "longer than 1024 bytes")
    return "/".join(parts)


@runtime_checkable
class ArtifactStore(Protocol):
    """Where artefacts live, addressed by ref."""

    def ref(self, *parts: str) -> str:
        """The ref of a path made of ``parts`` (checked)."""
        ...

    def put(self, ref: str, data: bytes | str | Path) -> str:
        """Store bytes, text or a local file under ``ref``; return the ref."""
        ...

    def get(self, ref: str) -> bytes:
        """The bytes under ``ref``.

        Raises:
            FileNotFoundError: If nothing is stored there.
        """
        ...

    def exists(self, ref: str) -> bool:
        """Whether something is stored under ``ref``."""
        ...

    def list(self, prefix: str) -> list[str]:
        """Every ref under ``prefix`` (recursively), sorted."""
        ...

    def local_path(self, ref: str) -> Path:
        """A local file for ``ref``: where a library that needs a file writes before :meth:`put`, or reads it."""
        ...

    def pull(self, prefix: str) -> Path:
        """A local folder holding every artefact under ``prefix`` (fetched first where the store is remote)."""
        ...

    def push(self, prefix: str) -> builtins.list[str]:
        """Store the files a tool wrote into ``local_path(prefix)``'s folder; return the refs sent (none locally)."""
        ...


def write_whole(dest: Path, data: bytes | str | Path) -> None:
    """Write ``data`` (bytes, text, or a local file copied in) to ``dest`` beside it first, then move it there in one
    step: a reader (a report open in a browser, the console, a worker waiting for the file) sees the old file or the
    whole new one, never half of it."""
    if isinstance(data, Path) and data.resolve() == dest.resolve():
        return
    tmp = partial_path(dest)
    try:
        if isinstance(data, Path):
            shutil.copyfile(data, tmp)
        elif isinstance(data, str):
            tmp.write_text(data, encoding="utf-8")
        else:
            tmp.write_bytes(data)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


_PARTIAL = ".part"


def partial_path(dest: Path) -> Path:
    """Where a file for ``dest`` is written before it is moved into place: beside it, hidden, and unique per writer."""
    return dest.with_name(f".{dest.name}.{uuid.uuid4().hex}{_PARTIAL}")


def is_partial(path: Path) -> bool:
    """A file still being written (:func:`partial_path`): listings and uploads skip it."""
    return path.name.startswith(".") and path.name.endswith(_PARTIAL)


class LocalArtifactStore:
    """Artefacts in a local folder: a ref is a path under ``root``.

    Args:
        root: The folder (created on first write).
    """

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"LocalArtifactStore({str(self.root)!r})"

    def ref(self, *parts: str) -> str:
        """The ref of ``parts`` joined (each part may itself hold ``/``)."""
        return check_ref("/".join(str(p).strip("/") for p in parts))

    def local_path(self, ref: str) -> Path:
        """The file of ``ref`` under the root (its folder is created)."""
        path = self.root / check_ref(ref)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def put(self, ref: str, data: bytes | str | Path) -> str:
        """Write ``data`` (bytes, text, or a local file copied in) under ``ref``, whole (:func:`write_whole`)."""
        ref = check_ref(ref)
        write_whole(self.local_path(ref), data)
        return ref

    def get(self, ref: str) -> bytes:
        """The bytes of ``ref``."""
        return (self.root / check_ref(ref)).read_bytes()

    def exists(self, ref: str) -> bool:
        """Whether ``ref`` is a file under the root."""
        return (self.root / check_ref(ref)).is_file()

    def list(self, prefix: str) -> list[str]:
        """Every file under ``prefix``, as refs."""
        base = self.root / check_ref(prefix)
        if not base.is_dir():
            return []
        return sorted(p.relative_to(self.root).as_posix() for p in base.rglob("*") if p.is_file() and not is_partial(p))

    def pull(self, prefix: str) -> Path:
        """The folder of ``prefix`` (already local)."""
        folder = self.root / check_ref(prefix)
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def push(self, prefix: str) -> builtins.list[str]:
        """Nothing to send: the files are already in the store."""
        check_ref(prefix)
        return []

    def ref_of(self, path: Path | str) -> str | None:
        """The ref of a local file under the root, or None for a file elsewhere."""
        try:
            return Path(path).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return None


class RunLayout:
    """The one place that says where a batch's artefacts go (``<batch>/...``, refs relative to the store)."""

    CASE_FILE = "case.json"
    VERDICT_FILE = "verdict.json"
    DETECTORS = "detectors"  # traffic-light detectors' weights, by content (``detectors/<digest>/<file>``)

    @staticmethod
    def batch(batch_id: str) -> str:
        """The folder of one batch (a submission's correlation id)."""
        return check_ref(batch_id)

    @staticmethod
    def crashes(batch_id: str) -> str:
        """The crash cases of a batch."""
        return check_ref(f"{batch_id}/crashes")

    @staticmethod
    def crash_case(batch_id: str, case_id: str) -> str:
        """One crash case: its report, scenario, runs and verdict."""
        return check_ref(f"{batch_id}/crashes/{case_id}")

    @staticmethod
    def case_file(case_ref: str) -> str:
        """The case's report, scenario and options (written by the planner)."""
        return check_ref(f"{case_ref}/{RunLayout.CASE_FILE}")

    @staticmethod
    def verdict_file(case_ref: str) -> str:
        """The case's verdict (written by the Judge)."""
        return check_ref(f"{case_ref}/{RunLayout.VERDICT_FILE}")

    @staticmethod
    def run_file(case_ref: str, run_id: str, suffix: str) -> str:
        """One run's record (``.json``), picture (``.png``) or animation (``.gif``)."""
        return check_ref(f"{case_ref}/{run_id}{suffix}")

    @staticmethod
    def is_run_record(name: str) -> bool:
        """Whether a file name in a case folder is a run's JSON record."""
        return name.endswith(".json") and name not in {RunLayout.CASE_FILE, RunLayout.VERDICT_FILE}

    @staticmethod
    def simulator_files(case_ref: str, simulator: str) -> str:
        """Files a simulator writes for a case (BeamNG's scenario files)."""
        return check_ref(f"{case_ref}/{simulator}")

    @staticmethod
    def crash_report(batch_id: str) -> str:
        """The HTML report of a batch's crash cases."""
        return check_ref(f"{batch_id}/crashes.html")

    @staticmethod
    def tl(batch_id: str) -> str:
        """A batch's traffic-light test: evidence, results and report."""
        return check_ref(f"{batch_id}/tl")

    @staticmethod
    def tl_input(batch_id: str) -> str:
        """A batch's traffic-light dataset as a client uploaded it (artefacts on the bus)."""
        return check_ref(f"{batch_id}/tl/input")

    @staticmethod
    def tl_augmented(batch_id: str) -> str:
        """A batch's augmented traffic-light dataset."""
        return check_ref(f"{batch_id}/tl/augmented")

    @staticmethod
    def tl_report(batch_id: str) -> str:
        """The HTML report of a batch's traffic-light test."""
        return check_ref(f"{batch_id}/tl/report.html")

    @staticmethod
    def cases(batch_id: str) -> str:
        """A batch's driving test cases (their frames, as submitted)."""
        return check_ref(f"{batch_id}/cases")

    @staticmethod
    def rules_report(batch_id: str) -> str:
        """The HTML report of a batch of rules."""
        return check_ref(f"{batch_id}/report.html")
