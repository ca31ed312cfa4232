"""The Judge's driving models: loaded once per spec, and their predictions on a case kept in the artefact store.

Predictions on a source case are shared by every follow-up made from it (other methods, other rounds, other
Judge copies): they are stored under ``predictions/<model key>/<case key>.json``, the model key hashing its spec
and files, the case key its frames' refs.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from pathlib import Path

from runners.ads.models import DrivingModel, DrivingModelError, load_model
from tools.common.artifacts import ArtifactStore
from tools.mt.generate import read_frames
from tools.mt.models import DrivingCase, ModelPrediction

__all__ = ["ModelPool", "import_models"]

_PREDICTIONS = "predictions"


def _model_key(spec_path: Path, files: list[str]) -> str:
    """A model's identity: its spec's bytes and its files' names, sizes and times."""
    h = hashlib.sha1(spec_path.read_bytes())
    for name in files:
        st = (spec_path.parent / name).stat()
        h.update(f"{name}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def _case_key(case: DrivingCase) -> str:
    return hashlib.sha1("|".join(case.frames).encode()).hexdigest()[:20]


class ModelPool:
    """Driving models by spec (a ref into the store, or a local path), with cached predictions.

    Args:
        store: Where specs, frames and cached predictions are.
        capacity: Most models kept loaded.
    """

    def __init__(self, store: ArtifactStore, *, capacity: int = 16) -> None:
        self.store = store
        self.capacity = capacity
        self._models: OrderedDict[str, tuple[DrivingModel, str]] = OrderedDict()
        self._lock = threading.Lock()

    def _path(self, spec: str) -> Path:
        p = Path(spec)
        if p.is_absolute():
            return p
        return self.store.local_path(spec)

    def model(self, spec: str) -> tuple[DrivingModel, str]:
        """The loaded model of a spec and its key.

        Raises:
            DrivingModelError: If it does not load.
        """
        with self._lock:
            if spec in self._models:
                self._models.move_to_end(spec)
                return self._models[spec]
        try:
            path = self._path(spec)
            found = path.is_file()
        except (OSError, ValueError) as exc:  # a name too long for the file system, a NUL byte
            raise DrivingModelError(Path(spec).stem[:80], f"adapter spec {spec[:300]!r} is no file: {exc}") from exc
        if not found:
            raise DrivingModelError(Path(spec).stem, f"adapter spec {spec} does not exist")
        model = load_model(path)
        entry = (model, _model_key(path, [f.file for f in model.spec.files]))
        with self._lock:
            self._models[spec] = entry
            while len(self._models) > self.capacity:
                self._models.popitem(last=False)
        return entry

    def predict(self, spec: str, case: DrivingCase, *, cache: bool = True) -> ModelPrediction:
        """A model's predictions on a case (from the store when this model has seen these frames before).

        Raises:
            DrivingModelError: If the model does not load, cannot take the frames, or returns NaN.
            UnrenderableError: If the case's frames cannot be read.
        """
        model, key = self.model(spec)
        ref = f"{_PREDICTIONS}/{key}/{_case_key(case)}.json"
        if cache and self.store.exists(ref):
            return ModelPrediction.model_validate_json(self.store.get(ref))
        prediction = model.predict(read_frames(self.store, case), case_id=case.case_id)
        if cache:
            self.store.put(ref, prediction.model_dump_json())
        return prediction


def import_models(store: ArtifactStore, folder: Path) -> list[str]:
    """Copy a models folder (adapter specs and the files they name) into the store once, by content.

    Returns:
        The refs of the specs, to name in a submission.

    Raises:
        DrivingModelError: If the folder holds no spec, or a spec names a file that is not there.
    """
    import json

    from runners.ads.spec import find_specs

    specs = find_specs(folder)
    if not specs:
        raise DrivingModelError(folder.name, f"{folder} holds no adapter spec (*.json)")
    refs = []
    for spec in specs:
        try:
            files = [f["file"] for f in json.loads(spec.read_text(encoding="utf-8")).get("files", [])]
        except (ValueError, AttributeError, KeyError, TypeError) as exc:
            raise DrivingModelError(spec.stem, f"adapter spec {spec} is not valid JSON with files: {exc}") from exc
        for name in files:
            if not (spec.parent / name).is_file():
                raise DrivingModelError(spec.stem, f"model file {spec.parent / name} does not exist")
        base = f"models/{_model_key(spec, files)}"
        ref = f"{base}/{spec.name}"
        if not store.exists(ref):
            for name in files:
                store.put(f"{base}/{name}", (spec.parent / name).read_bytes())
            store.put(ref, spec.read_bytes())
        refs.append(ref)
    return refs
