"""Artefacts in NATS JetStream's Object Store, for workers that share no file system.

:class:`ObjectArtifactStore` implements :class:`~tools.common.artifacts.ArtifactStore`: a ref is an object's name
in one bucket of the namespace (``<NS>_artifacts``), and every object carries its SHA-256 digest, checked on each
download. A local folder (the process's own runs folder) caches what this process wrote or read, so the tools that
need files (simulators, image libraries, report writers) keep working on files: :meth:`local_path` downloads an
object before it is read, :meth:`pull` a whole folder, and :meth:`push` uploads what a tool wrote into a folder.

The tools call the store synchronously, from the event loop or from worker threads; the store therefore keeps its
own NATS connection on a thread of its own and waits for each call's reply there.
"""

from __future__ import annotations

import asyncio
import base64
import builtins
import contextlib
import hashlib
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

import structlog
from nats.js import api
from nats.js.errors import BucketNotFoundError, NotFoundError, ObjectNotFoundError
from nats.js.object_store import ObjectStore

from bus import Bus, BusSettings, Subjects
from bus.errors import BusError
from tools.common.artifacts import check_ref, is_partial, partial_path, write_whole

__all__ = ["ObjectArtifactStore", "sha256_digest"]

log = structlog.get_logger(__name__)
T = TypeVar("T")


def sha256_digest(data: bytes | Path) -> str:
    """The Object Store's digest of bytes or a file (``SHA-256=<urlsafe base64>``)."""
    h = hashlib.sha256()
    if isinstance(data, Path):
        with data.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    else:
        h.update(data)
    return "SHA-256=" + base64.urlsafe_b64encode(h.digest()).decode()


class ObjectArtifactStore:
    """Artefacts in a JetStream Object Store bucket, with a local cache folder.

    Args:
        url: NATS server or cluster (comma-separated), as the bus takes it.
        subjects: The namespace (its bucket is ``subjects.streams.artifacts_bucket``).
        cache_dir: Local folder for files written and read here (the process's runs folder).
        settings: Bus settings (replicas of the bucket, connect timeout, credentials).
        timeout_s: Seconds each call may take.
    """

    def __init__(
        self,
        *,
        url: str,
        subjects: Subjects,
        cache_dir: Path,
        settings: BusSettings | None = None,
        timeout_s: float = 300.0,
    ) -> None:
        self.url = url
        self.subjects = subjects
        self.bucket = subjects.streams.artifacts_bucket
        self.root = Path(cache_dir)
        self.settings = settings or BusSettings()
        self.timeout_s = timeout_s
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._bus: Bus | None = None
        self._obs: ObjectStore | None = None

    def __repr__(self) -> str:
        return f"ObjectArtifactStore(bucket={self.bucket!r}, cache={str(self.root)!r})"

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        """Connect on a thread of its own and create the bucket if needed.

        Raises:
            BusError: If the bus cannot be reached or the bucket cannot be made.
        """
        if self._thread is not None:
            return
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="drivemt-objects", daemon=True)
        self._thread.start()
        try:
            self._call(self._open, timeout=max(30.0, self.settings.connect_timeout_s + 20))
        except BaseException:
            self.close()
            raise

    async def _open(self) -> None:
        bus = Bus(url=self.url, subjects=self.subjects, name="drivemt-objects", settings=self.settings)
        await bus.connect()
        self._bus = bus
        try:
            self._obs = await bus.js.object_store(self.bucket)
        except (BucketNotFoundError, NotFoundError):
            self._obs = await bus.js.create_object_store(
                self.bucket,
                config=api.ObjectStoreConfig(
                    description="drivemt artefacts (case frames, run records, pictures, datasets, reports)",
                    storage=api.StorageType.FILE,
                    replicas=self.settings.replicas,
                ),
            )
        log.info("object store open", bucket=self.bucket, replicas=self.settings.replicas)

    def close(self) -> None:
        """Close the connection and stop the thread."""
        loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
        if loop is None:
            return
        bus = self._bus
        if bus is not None and thread is not None and thread.is_alive():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(bus.close(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(10)
        loop.close()
        self._bus = self._obs = None

    def __enter__(self) -> ObjectArtifactStore:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, make: Callable[[], Coroutine[Any, Any, T]], *, timeout: float | None = None) -> T:
        if self._loop is None:
            raise BusError("the object store is not started")
        if threading.current_thread() is self._thread:
            raise RuntimeError("ObjectArtifactStore methods cannot be called from its own thread")
        future: Future[T] = asyncio.run_coroutine_threadsafe(make(), self._loop)
        try:
            return future.result(timeout or self.timeout_s)
        except TimeoutError as exc:
            future.cancel()
            raise BusError(f"object store {self.bucket}: no answer within {timeout or self.timeout_s} s") from exc

    @property
    def obs(self) -> ObjectStore:
        """The bucket."""
        if self._obs is None:
            raise BusError("the object store is not started")
        return self._obs

    # -- the ArtifactStore protocol -----------------------------------------------------------------
    def ref(self, *parts: str) -> str:
        """The ref of ``parts`` joined (each part may itself hold ``/``)."""
        return check_ref("/".join(str(p).strip("/") for p in parts))

    def _cache(self, ref: str) -> Path:
        path = self.root / check_ref(ref)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def _info(self, ref: str) -> api.ObjectInfo | None:
        async def info() -> api.ObjectInfo | None:
            try:
                return await self.obs.get_info(ref)
            except ObjectNotFoundError:
                return None

        return self._call(info)

    def _download(self, ref: str, dest: Path) -> None:
        """Fetch an object into ``dest`` (written aside and renamed; nats-py checks its digest)."""
        part = partial_path(dest)

        async def get() -> None:
            with part.open("wb") as fh:
                await self.obs.get(ref, writeinto=fh)

        try:
            self._call(get)
        except ObjectNotFoundError as exc:
            part.unlink(missing_ok=True)
            raise FileNotFoundError(f"no artefact {ref!r} in {self.bucket}") from exc
        except BaseException:
            part.unlink(missing_ok=True)
            raise
        part.replace(dest)

    def _fresh(self, ref: str, path: Path, info: api.ObjectInfo) -> bool:
        return path.is_file() and path.stat().st_size == (info.size or 0) and sha256_digest(path) == info.digest

    def local_path(self, ref: str) -> Path:
        """The cached file of ``ref``, downloaded first when the bucket holds a newer one (for reading); a path to
        write to otherwise (then :meth:`put` or :meth:`push` it)."""
        path = self._cache(ref)
        info = self._info(check_ref(ref))
        if info is not None and not self._fresh(ref, path, info):
            self._download(check_ref(ref), path)
        return path

    def put(self, ref: str, data: bytes | str | Path) -> str:
        """Upload bytes, text or a local file under ``ref`` (and keep it in the cache); return the ref."""
        ref = check_ref(ref)
        dest = self._cache(ref)
        write_whole(dest, data)
        self._upload(ref, dest)
        return ref

    def _upload(self, ref: str, path: Path) -> None:
        async def put() -> None:
            with path.open("rb") as fh:
                await self.obs.put(ref, fh)

        self._call(put)

    def get(self, ref: str) -> bytes:
        """The bytes of ``ref`` (from the cache when its digest matches the bucket's).

        Raises:
            FileNotFoundError: If the bucket holds nothing under ``ref``.
        """
        return self.local_path_existing(ref).read_bytes()

    def local_path_existing(self, ref: str) -> Path:
        """Like :meth:`local_path`, for an artefact that must exist.

        Raises:
            FileNotFoundError: If the bucket holds nothing under ``ref``.
        """
        ref = check_ref(ref)
        info = self._info(ref)
        if info is None:
            raise FileNotFoundError(f"no artefact {ref!r} in {self.bucket}")
        path = self._cache(ref)
        if not self._fresh(ref, path, info):
            self._download(ref, path)
        return path

    def exists(self, ref: str) -> bool:
        """Whether the bucket holds ``ref``."""
        return self._info(check_ref(ref)) is not None

    def _names(self) -> dict[str, api.ObjectInfo]:
        async def names() -> dict[str, api.ObjectInfo]:
            try:
                infos = await self.obs.list(ignore_deletes=True)
            except NotFoundError:  # an empty bucket
                return {}
            return {i.name: i for i in infos if i.name and not i.deleted}

        return self._call(names)

    def list(self, prefix: str) -> list[str]:
        """Every ref under ``prefix``, sorted."""
        base = check_ref(prefix) + "/"
        return sorted(n for n in self._names() if n.startswith(base))

    def pull(self, prefix: str) -> Path:
        """Download every object under ``prefix`` that the cache lacks or holds stale; return the local folder."""
        base = check_ref(prefix)
        for name, info in self._names().items():
            if name.startswith(base + "/") or name == base:
                path = self._cache(name)
                if not self._fresh(name, path, info):
                    self._download(name, path)
        folder = self.root / base
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def push(self, prefix: str) -> builtins.list[str]:
        """Upload every cached file under ``prefix`` that the bucket lacks or holds different; return their refs."""
        base = check_ref(prefix)
        folder = self.root / base
        if not folder.is_dir():
            return []
        have = self._names()
        sent = []
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and not is_partial(p)):
            ref = path.relative_to(self.root).as_posix()
            info = have.get(ref)
            if info is None or info.digest != sha256_digest(path):
                self._upload(ref, path)
                sent.append(ref)
        return sent
