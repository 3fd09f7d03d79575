"""Uploaded svmlight datasets: size limits, decompression, validation and registration.

:func:`upload_dataset` is the whole of an upload: its name (given, or made from the file
name; never a public dataset's, refused before the file is kept), :func:`receive`,
:func:`parse` and the registration, private to the uploading team.

:func:`receive` copies the upload into a temporary file of the upload folder, refusing it past
``max_bytes``. A bzip2 or gzip upload, recognized by its magic bytes whatever its name, is then
decompressed chunk by chunk into plain text, refused past ``max_decompressed`` bytes: a
decompression bomb costs at most that much disk and one chunk of memory. The stored file is
always plain svmlight text, named by the caller after its sha256, so the same data uploaded
plain or compressed is the same file.

:func:`parse` validates the text before anything is registered: a
:class:`faceoff.core.specs.SpecError`
at ``("file",)`` says ``FILE: line N: problem``; a declared ``n_features`` or a parsed shape
over the caps (:class:`faceoff.core.datasets.Caps`) is refused at ``("n_features",)`` or
``("file",)``.
Parsing costs memory in proportion to the file, never to a declared dimension.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import os
import re
import tempfile
import zlib
from collections.abc import Callable
from io import BufferedIOBase
from pathlib import Path, PurePath
from typing import BinaryIO

import numpy as np
import scipy.sparse as sp
from sqlalchemy.orm import Session

from faceoff.core.datasets import (
    NAME_PATTERN,
    Caps,
    add_dataset,
    check_matrix,
    check_public_name,
    check_source,
    find_dataset,
    name_taken,
)
from faceoff.core.models import Dataset
from faceoff.core.settings import Settings
from faceoff.core.specs import SpecError, check_text_at

CHUNK = 1 << 20
# magic bytes: gzip (RFC 1952), bzip2 ("BZh" and the block size 1-9)
MAGIC = {b"\x1f\x8b": "gzip", **{b"BZh%d" % level: "bzip2" for level in range(1, 10)}}
OPENERS: dict[str, Callable[[Path], BufferedIOBase]] = {"gzip": gzip.GzipFile, "bzip2": bz2.BZ2File}
SUFFIXES = (".bz2", ".gz", ".svm", ".txt", ".libsvm", ".svmlight")  # dropped from a file name


class UploadTooLarge(Exception):
    """An upload over the size limit, or one that decompresses to more than its limit."""

    def __init__(self, limit: int, decompressed: bool = False) -> None:
        what = "the decompressed size exceeds" if decompressed else "the file is larger than"
        setting = "MAX_UPLOAD_DECOMPRESSED_BYTES" if decompressed else "MAX_UPLOAD_BYTES"
        super().__init__(f"{what} the limit of {limit} bytes (FACEOFF_{setting})")
        self.limit = limit


def display_name(filename: str) -> str:
    """The last component of a client's file name, the only part ever shown or used."""
    return PurePath(filename.replace("\\", "/")).name or "upload"


def compression(head: bytes) -> str | None:
    """ "gzip" or "bzip2" when ``head`` starts with their magic bytes, None otherwise."""
    return next((kind for magic, kind in MAGIC.items() if head.startswith(magic)), None)


def receive(
    stream: BinaryIO, upload_dir: Path, filename: str, max_bytes: int, max_decompressed: int
) -> tuple[Path, str]:
    """Store an upload as plain text in a temporary file of ``upload_dir``.

    Returns (path, sha256 of the plain text). Raises :class:`UploadTooLarge` past
    ``max_bytes`` as sent or ``max_decompressed`` once decompressed, and SpecError at
    ``("file",)`` for corrupt compressed data; no file is left behind then.
    """
    upload_dir.mkdir(parents=True, exist_ok=True)
    raw = _temporary(upload_dir)
    made = [raw]
    try:
        with open(raw, "wb") as out:
            digest = _copy(stream, out, max_bytes, UploadTooLarge(max_bytes))
        with open(raw, "rb") as f:
            kind = compression(f.read(4))
        if kind is None:
            return raw, digest
        text = _temporary(upload_dir)
        made.append(text)
        too_large = UploadTooLarge(max_decompressed, decompressed=True)
        try:
            with OPENERS[kind](raw) as source, open(text, "wb") as out:
                digest = _copy(source, out, max_decompressed, too_large)
        except (OSError, EOFError, zlib.error) as err:
            message = f"{display_name(filename)}: not valid {kind} data ({err})"
            raise SpecError(("file",), message) from None
        raw.unlink()
        return text, digest
    except BaseException:
        for path in made:
            path.unlink(missing_ok=True)
        raise


def parse(
    path: Path, filename: str, n_features: int | None, caps: Caps
) -> tuple[sp.csr_matrix, np.ndarray]:
    """(matrix, labels) of the plain svmlight file ``path``; SpecError ``FILE: line N: problem``
    at ``("file",)`` when it is not valid (see :func:`faceoff.data.svmlight.read_svmlight`), and
    ``faceoff.core.datasets.DatasetTooLarge`` when ``n_features`` or the file's shape exceed
    ``caps``."""
    from faceoff.data.svmlight import SvmlightError, read_svmlight

    check_source({"kind": "upload", "n_features": n_features}, caps)
    name = display_name(filename)
    check_counts(path, name, caps)
    try:
        A, b = read_svmlight(path, n_features=n_features)
    except SvmlightError as err:
        where = name if err.line is None else f"{name}: line {err.line}"
        raise SpecError(("file",), f"{where}: {err.problem}") from None
    check_matrix(A, caps, name, ("file",))
    return A, b


def check_counts(path: Path, name: str, caps: Caps) -> None:
    """Refuse, before it is parsed, a file with more examples or feature values than
    ``caps`` allow (DatasetTooLarge at ``("file",)``): the parser's memory grows by about
    16 bytes per line and per value, up to 8 times the file's size.

    A first pass counts line ends and colons chunk by chunk, upper bounds of the examples
    and values; only when they exceed the caps is the file counted exactly, line by line
    (comments and blank lines aside), until a cap is passed.
    """
    lines = values = 0
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            lines, values = lines + chunk.count(b"\n"), values + chunk.count(b":")
    if lines + 1 <= caps.n_samples and values <= caps.nnz:
        return
    samples = nnz = 0
    locs = dict.fromkeys(("n_samples", "nnz"), ("file",))
    with open(path, "rb") as f:
        for number, line in enumerate(f, start=1):
            tokens = line.split(b"#", 1)[0].split()
            if tokens:
                samples += 1
                nnz += sum(1 for token in tokens[1:] if not token.startswith(b"qid:"))
                if samples > caps.n_samples or nnz > caps.nnz:
                    subject = f"{name} (up to line {number})"
                    caps.check(subject, locs, n_samples=samples, nnz=nnz)


def _temporary(folder: Path) -> Path:
    fd, name = tempfile.mkstemp(dir=folder, suffix=".part")
    os.close(fd)
    return Path(name)


def _copy(
    source: BinaryIO | BufferedIOBase, out: BinaryIO, limit: int, too_large: UploadTooLarge
) -> str:
    """Copy ``source`` to ``out`` one chunk at a time; its sha256, or ``too_large`` raised as
    soon as more than ``limit`` bytes have been read."""
    digest = hashlib.sha256()
    size = 0
    while chunk := source.read(CHUNK):
        size += len(chunk)
        if size > limit:
            raise too_large
        digest.update(chunk)
        out.write(chunk)
    return digest.hexdigest()


def upload_name(name: str | None, filename: str) -> str:
    """The name an upload is registered as: ``name``, or else one made from the file name
    (its suffixes dropped, other characters replaced by ``_``); SpecError at ``("name",)``
    when none can be made."""
    if name:
        return name
    stem = display_name(filename)
    for suffix in SUFFIXES:
        stem = stem.removesuffix(suffix)
    made = re.sub(r"[^A-Za-z0-9._+-]", "_", stem).lstrip("._+-")[:200]
    if not re.fullmatch(NAME_PATTERN, made):
        raise SpecError(("name",), f"no dataset name can be made from {filename!r}; give name")
    return made


def read_local(path: Path, settings: Settings) -> tuple[sp.csr_matrix, np.ndarray]:
    """(matrix, labels) of a local svmlight file (plain, bzip2 or gzip), read as an upload
    would be: within the same size caps, with the same ``FILE: line N: problem`` errors. A
    compressed file is decompressed into a temporary folder first."""
    if path.stat().st_size > settings.MAX_UPLOAD_BYTES:
        raise UploadTooLarge(settings.MAX_UPLOAD_BYTES)
    with open(path, "rb") as f:
        compressed = compression(f.read(4)) is not None
    caps = Caps.of(settings)
    if not compressed:
        return parse(path, path.name, None, caps)
    with tempfile.TemporaryDirectory() as folder, open(path, "rb") as f:
        limit = settings.MAX_UPLOAD_DECOMPRESSED_BYTES
        text, _ = receive(f, Path(folder), path.name, settings.MAX_UPLOAD_BYTES, limit)
        return parse(text, path.name, None, caps)


def store_upload(stream: BinaryIO, filename: str, settings: Settings) -> tuple[Path, str]:
    """Receive an upload into the upload folder: (temporary path, sha256), see
    :func:`receive` (UploadTooLarge past the settings' limits)."""
    return receive(
        stream,
        settings.upload_dir,
        filename,
        settings.MAX_UPLOAD_BYTES,
        settings.MAX_UPLOAD_DECOMPRESSED_BYTES,
    )


def register_upload(
    session: Session,
    name: str,
    filename: str,
    path: Path,
    sha256: str,
    n_features: int | None,
    *,
    team_id: int | None,
    caps: Caps,
) -> tuple[Dataset, bool]:
    """Parse the uploaded svmlight file at ``path`` and register it as ``name``, private to
    the team ``team_id``.

    The file is validated first (SpecError ``FILENAME: line N: problem`` at ``("file",)``,
    DatasetTooLarge over ``caps``; the temporary file is removed); a valid file is kept as
    ``<sha256>.svm`` next to ``path``. Returns (dataset, created) as
    :func:`faceoff.core.datasets.register_dataset`.
    """
    try:
        check_text_at(name, ("name",))
        stored = f"{sha256}.svm"
        source = {"kind": "upload", "file": stored, "n_features": n_features}
        check_public_name(name, source)
        A, _ = parse(path, filename, n_features, caps)
        existing = find_dataset(session, name, team_id=team_id)
        if existing is not None and existing.source != source:
            raise name_taken(existing)
        path.replace(path.parent / stored)
    finally:
        path.unlink(missing_ok=True)
    if existing is not None:
        return existing, False
    n, d = A.shape
    shape = {"n_samples": n, "n_features": d, "nnz": int(A.nnz)}
    return add_dataset(
        session, Dataset(name=name, source=source, sha256=sha256, team_id=team_id, **shape)
    )


def upload_dataset(
    session: Session,
    stream: BinaryIO,
    filename: str,
    name: str | None,
    n_features: int | None,
    settings: Settings,
    *,
    team_id: int | None,
) -> tuple[Dataset, bool]:
    """Receive, validate and register an upload as ``name`` (default: made from
    ``filename``), private to the team. A public dataset's name is refused (ConflictError)
    before anything is stored; then as :func:`store_upload` and :func:`register_upload`."""
    name = upload_name(name, filename)
    check_public_name(name, {"kind": "upload"})
    path, sha256 = store_upload(stream, filename, settings)
    return register_upload(
        session, name, filename, path, sha256, n_features, team_id=team_id, caps=Caps.of(settings)
    )
