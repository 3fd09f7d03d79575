"""Where a dataset's file is: the mirror folder, the cache folder, or a download.

:func:`dataset_path` looks, for every source of the registry entry in order, in the mirror
folder (``FACEOFF_DATA_MIRROR``), then in the cache folder (``FACEOFF_DATA_CACHE``, default
``~/.cache/faceoff/datasets``), and otherwise downloads the first URL into the cache: to a
temporary file, verified, then renamed into place, so the cache never holds a partial or
corrupted file. An interrupted download is retried (3 attempts), resuming with an HTTP Range
request when the server supports it and restarting cleanly otherwise.

Integrity: a known sha256 is checked on every use. When it is unknown (official LIBSVM files,
see :mod:`faceoff.data.registry`) the hash of the first download is written to
``FILE.sha256`` next to
the cached file and enforced from then on.

File names only ever come from the registry (plain names, checked by
:class:`faceoff.data.registry.Source`) and names are registry keys; every path is built by
:func:`file_in`, which checks the name again, so no path can escape the folders.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import shutil
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TaskID,
    TextColumn,
    TransferSpeedColumn,
)

from faceoff.data.registry import (
    DatasetError,
    DatasetSpec,
    DatasetUnavailableError,
    Source,
    check_file_name,
    get_spec,
)

ATTEMPTS = 3
CHUNK = 1 << 16
TIMEOUT_S = 30.0
PROBE_TIMEOUT_S = 3.0  # how long registering a dataset waits for its download URL to answer


def mirror_dir() -> Path | None:
    """The mirror folder (``FACEOFF_DATA_MIRROR``), None when unset."""
    value = os.environ.get("FACEOFF_DATA_MIRROR")
    return Path(value) if value else None


def cache_dir() -> Path:
    """The cache folder (``FACEOFF_DATA_CACHE``, default ``~/.cache/faceoff/datasets``)."""
    value = os.environ.get("FACEOFF_DATA_CACHE")
    return Path(value) if value else Path.home() / ".cache" / "faceoff" / "datasets"


@dataclass(frozen=True)
class Located:
    """A dataset file found or fetched: its path, sha256 and where it came from."""

    path: Path
    sha256: str
    origin: str  # "mirror", "cache" or "download"


def file_in(folder: Path, source: Source) -> Path:
    """``folder / source.file``; DatasetError if the name is not a plain file name."""
    try:
        return folder / check_file_name(source.file)
    except ValueError as err:
        raise DatasetError(f"refused: {err}") from None


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def status(spec: DatasetSpec, mirror: Path | None = None, cache: Path | None = None) -> str:
    """ "mirror", "cached" or "remote": where :func:`locate` would find the file (by name only,
    without hashing)."""
    mirror = mirror_dir() if mirror is None else mirror
    cache = cache_dir() if cache is None else cache
    if mirror is not None and any(file_in(mirror, s).is_file() for s in spec.sources):
        return "mirror"
    if any(file_in(cache, s).is_file() for s in spec.sources):
        return "cached"
    return "remote"


def how_to_provide(spec: DatasetSpec) -> str:
    """What a person can do when the file of ``spec`` is nowhere to be had."""
    return (
        f"put {spec.sources[0].file} in the mirror folder (FACEOFF_DATA_MIRROR) or the cache "
        "folder (FACEOFF_DATA_CACHE) of the machines that run the API and the workers "
        f"(`faceoff datasets fetch {spec.name}` on a machine with network access writes it "
        "to that machine's cache), or upload your copy under another name (`faceoff "
        "datasets upload FILE`)"
    )


def reachable(url: str, timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """None when ``url`` answers a HEAD request within ``timeout`` seconds (a server that
    refuses HEAD answers too), else why not: the network error, or the HTTP error."""
    request = urllib.request.Request(url, method="HEAD", headers={"User-Agent": "faceoff"})
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return None
    except urllib.error.HTTPError as err:
        return None if err.code in (405, 501) else f"HTTP {err.code} {err.reason}"
    except (urllib.error.URLError, http.client.HTTPException, OSError) as err:
        return f"{type(err).__name__}: {getattr(err, 'reason', err)}"


def availability(
    spec: DatasetSpec,
    *,
    mirror: Path | None = None,
    cache: Path | None = None,
    timeout: float = PROBE_TIMEOUT_S,
) -> str:
    """Where the file of ``spec`` would come from: ``"mirror"``, ``"cached"`` (by name, as
    :func:`status`), or ``"download"`` when it is in neither but its download URL answers
    within ``timeout`` seconds. :class:`DatasetError` naming the dataset, the folders and
    the URL tried, and how to provide the file (:func:`how_to_provide`), otherwise."""
    mirror = mirror_dir() if mirror is None else mirror
    cache = cache_dir() if cache is None else cache
    where = status(spec, mirror, cache)
    if where != "remote":
        return where
    folders = f"mirror folder {mirror}" if mirror else "mirror folder (FACEOFF_DATA_MIRROR unset)"
    urls = [s.url for s in spec.sources if s.url]
    if not urls:
        why = "it has no download URL"
    elif (problem := reachable(urls[0], timeout)) is not None:
        why = (
            f"its download URL {urls[0]} cannot be reached from here ({problem}; "
            f"{timeout:g} s timeout)"
        )
    else:
        return "download"
    raise DatasetError(
        f"dataset {spec.name!r} is not in the {folders} nor in the cache folder {cache}, "
        f"and {why}: {how_to_provide(spec)}"
    )


def dataset_path(
    name: str,
    *,
    registry: Mapping[str, DatasetSpec] | None = None,
    mirror: Path | None = None,
    cache: Path | None = None,
    progress: bool = True,
) -> Path:
    """The local path of the dataset ``name``, downloading it into the cache if needed.

    ``registry``, ``mirror`` and ``cache`` default to :data:`faceoff.data.registry.REGISTRY`,
    :func:`mirror_dir` and :func:`cache_dir`. Raises :class:`DatasetError`
    (:class:`DatasetUnavailableError` when the file is nowhere and cannot be downloaded).
    """
    spec = get_spec(name, registry)
    return locate(spec, mirror=mirror, cache=cache, progress=progress).path


def locate(
    spec: DatasetSpec,
    *,
    mirror: Path | None = None,
    cache: Path | None = None,
    progress: bool = True,
    copy_to_cache: bool = False,
) -> Located:
    """Find ``spec``'s file (mirror, cache, download); with ``copy_to_cache`` a mirror file
    is also copied into the cache (``faceoff datasets fetch``)."""
    mirror = mirror_dir() if mirror is None else mirror
    cache = cache_dir() if cache is None else cache
    if mirror is not None:
        for source in spec.sources:
            path = file_in(mirror, source)
            if path.is_file():
                sha = _verified(path, source.sha256, f"mirror file of dataset {spec.name!r}")
                if copy_to_cache:
                    return _copy_into(cache, path, source, sha, spec)
                return Located(path, sha, "mirror")
    for source in spec.sources:
        path = file_in(cache, source)
        if path.is_file():
            expected = source.sha256 or _recorded_sha(path)
            sha = _verified(path, expected, f"cached file of dataset {spec.name!r}")
            return Located(path, sha, "cache")
    downloadable = [s for s in spec.sources if s.url]
    where = f"mirror folder {mirror}" if mirror else "mirror folder (FACEOFF_DATA_MIRROR unset)"
    if not downloadable:
        raise DatasetUnavailableError(
            f"dataset {spec.name!r} ({spec.sources[0].file}) is not in the {where} and has "
            f"no download URL: {how_to_provide(spec)}"
        )
    source = downloadable[0]
    try:
        path, sha = download(source, cache, progress=progress)
    except DatasetError as err:  # unavailable, unless the download was the wrong file
        kind = DatasetUnavailableError if isinstance(err, DatasetUnavailableError) else DatasetError
        raise kind(
            f"dataset {spec.name!r}: not in the {where} nor in the cache {cache}, and the "
            f"download from {source.url} failed: {err}; {how_to_provide(spec)}"
        ) from None
    return Located(path, sha, "download")


def _verified(path: Path, expected: str | None, what: str) -> str:
    sha = file_sha256(path)
    if expected is not None and sha != expected:
        raise DatasetError(
            f"{what} {path} has sha256 {sha}, expected {expected}: the file is corrupted or "
            "not the registered one; delete it to fetch it again"
        )
    return sha


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _recorded_sha(path: Path) -> str | None:
    sidecar = _sidecar(path)
    return sidecar.read_text().strip() if sidecar.is_file() else None


def _copy_into(cache: Path, path: Path, source: Source, sha: str, spec: DatasetSpec) -> Located:
    target = file_in(cache, source)
    if not target.is_file() or file_sha256(target) != sha:
        cache.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache, prefix=f".{source.file}.", suffix=".part")
        os.close(fd)
        try:
            shutil.copyfile(path, tmp)
            os.replace(tmp, target)
        finally:
            Path(tmp).unlink(missing_ok=True)
    return Located(target, sha, "mirror")


def download(source: Source, cache: Path, *, progress: bool = True) -> tuple[Path, str]:
    """Download ``source.url`` to ``cache / source.file``; returns (path, sha256).

    Up to :data:`ATTEMPTS` attempts; after a short read the next one asks for the rest with
    ``Range: bytes=N-`` and appends when the server answers 206, restarts otherwise. A failed
    transfer is a :class:`DatasetUnavailableError`; on a sha256 mismatch nothing is kept and
    :class:`DatasetError` says so.
    """
    if source.url is None:
        raise DatasetUnavailableError(f"{source.file} has no download URL")
    target = file_in(cache, source)
    cache.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=cache, prefix=f".{source.file}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, _Bar(source.file, progress) as bar:
            _transfer(source.url, out, bar)
        sha = file_sha256(tmp)
        if source.sha256 is not None and sha != source.sha256:
            raise DatasetError(
                f"the downloaded file has sha256 {sha}, expected {source.sha256}; it was "
                "deleted and nothing was cached"
            )
        if source.sha256 is None:  # recorded first: the file never exists without it
            _sidecar(target).write_text(sha + "\n")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target, sha


def _transfer(url: str, out: BinaryIO, bar: _Bar) -> None:
    """Write the body of ``url`` to ``out``, retrying short reads and dropped connections."""
    received = 0
    problem = ""
    for attempt in range(ATTEMPTS):
        if attempt:
            time.sleep(0.2 * attempt)
        request = urllib.request.Request(url, headers={"User-Agent": "faceoff"})
        if received:
            request.add_header("Range", f"bytes={received}-")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                if received and response.status != 206:  # no resume: start over
                    out.seek(0)
                    out.truncate()
                    received = 0
                length = response.headers.get("Content-Length")
                total = received + int(length) if length is not None else None
                bar.start(total, received)
                while chunk := response.read(CHUNK):
                    out.write(chunk)
                    received += len(chunk)
                    bar.advance(received)
                if total is None or received == total:
                    return
                problem = f"connection closed after {received} of {total} bytes"
        except urllib.error.HTTPError as err:
            if err.code < 500:
                raise DatasetUnavailableError(f"HTTP {err.code} {err.reason}") from None
            problem = f"HTTP {err.code} {err.reason}"
        except (urllib.error.URLError, http.client.HTTPException, OSError) as err:
            reason = getattr(err, "reason", err)
            problem = f"{type(err).__name__}: {reason}"
    raise DatasetUnavailableError(f"{problem} ({ATTEMPTS} attempts)")


class _Bar:
    """A rich progress bar on stderr when it is a terminal (nothing when ``enabled`` is
    False)."""

    def __init__(self, label: str, enabled: bool) -> None:
        self.label = label
        self.progress: Progress | None = None
        self.task: TaskID | None = None
        if enabled:
            console = Console(stderr=True)
            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                console=console,
                transient=True,
                disable=not console.is_terminal,  # no stray lines in logs and pipes
            )

    def __enter__(self) -> _Bar:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()

    def start(self, total: int | None, completed: int) -> None:
        if self.progress is None:
            return
        if self.task is None:
            self.task = self.progress.add_task(f"downloading {self.label}", total=total)
        self.progress.update(self.task, total=total, completed=completed)

    def advance(self, completed: int) -> None:
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, completed=completed)
