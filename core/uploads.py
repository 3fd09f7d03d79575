"""Uploaded svmlight datasets: size limits, decompression, validation and registration.

:func:`upload_dataset` is the whole of an upload: its name (given, or made from the file
name; never a public dataset's, refused before the file is kept), :func:`receive`,
:func:`validate` and the registration, private to the uploading team.

The API's memory is bounded by construction, whatever the upload holds:

- :func:`receive` streams the upload into a temporary file of the upload folder one chunk
  (:data:`CHUNK`) at a time. A bzip2 or gzip upload, recognized by its magic bytes whatever
  its name, is decompressed in the same stream — every gzip member and bzip2 stream, one
  chunk of output at a time — and the plain text is what is stored, named by the caller
  after its sha256 (the same data uploaded plain or compressed is one file). The upload is
  refused with :class:`UploadTooLarge` (413, naming the setting) as soon as it passes
  ``MAX_UPLOAD_BYTES`` as sent, ``MAX_UPLOAD_DECOMPRESSED_BYTES`` decompressed, or
  ``API_MAX_UPLOAD_VALUES`` feature values (counted as the text streams by:
  :class:`ValueCounter`), so a compression bomb costs at most those limits of disk and
  time and one chunk of memory. A container inside the container (zip in gzip, gzip in
  bzip2, …) or another archive format is refused at its first bytes (422).
- :func:`validate` reads the stored text in blocks of whole lines (about :data:`CHUNK`
  bytes; a line longer than :data:`MAX_LINE_BYTES` is a 422), parses each block with the
  same parser and rules as the worker (:mod:`faceoff.data.svmlight`) and keeps only the
  shape: the API never holds an upload's matrix. A :class:`faceoff.core.specs.SpecError`
  at ``("file",)`` says ``FILE: line N: problem``; a declared ``n_features`` or a shape
  over the worker's caps (:class:`faceoff.core.datasets.Caps`) is refused at
  ``("n_features",)`` or ``("file",)`` as soon as a block passes them.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import os
import re
import tempfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import BinaryIO, Protocol

import numpy as np
import scipy.sparse as sp
from sqlalchemy.orm import Session

from faceoff.core.datasets import (
    NAME_PATTERN,
    Caps,
    add_dataset,
    check_public_name,
    check_source,
    find_dataset,
    name_taken,
)
from faceoff.core.models import Dataset
from faceoff.core.settings import Settings
from faceoff.core.specs import SpecError, check_text_at
from faceoff.data.labels import summarize
from faceoff.data.svmlight import FORMAT_HINT, line_problem, read_svmlight

CHUNK = 1 << 20  # bytes received, decompressed, counted or validated at a time
MAX_LINE_BYTES = 64 << 20  # the longest svmlight line validated (a dense 4M-feature row fits)
# magic bytes: gzip (RFC 1952), bzip2 ("BZh" and the block size 1-9)
MAGIC = {b"\x1f\x8b": "gzip", **{b"BZh%d" % level: "bzip2" for level in range(1, 10)}}
# other containers, refused: an upload is svmlight text, compressed once at most
FOREIGN = {
    b"PK\x03\x04": "zip",
    b"PK\x05\x06": "zip",
    b"\xfd7zXZ\x00": "xz",
    b"\x28\xb5\x2f\xfd": "zstd",
    b"7z\xbc\xaf\x27\x1c": "7z",
    b"\x04\x22\x4d\x18": "lz4",
    b"Rar!\x1a\x07": "rar",
}
HEAD = 8  # bytes enough to tell every magic above
SUFFIXES = (".bz2", ".gz", ".svm", ".txt", ".libsvm", ".svmlight")  # dropped from a file name


class Readable(Protocol):
    """What an upload is read from (and what the decompressors read): bytes on request;
    never sought (:class:`_Bounded` says it cannot be)."""

    def read(self, size: int = -1, /) -> bytes: ...

    def seekable(self) -> bool: ...

    def seek(self, offset: int, /) -> int: ...


def _gunzip(source: Readable) -> io.BufferedIOBase:
    return gzip.GzipFile(fileobj=source, mode="rb")  # every member, one after the other


def _bunzip(source: Readable) -> io.BufferedIOBase:
    return bz2.BZ2File(source, mode="rb")  # every stream, one after the other


OPENERS: dict[str, Callable[[Readable], io.BufferedIOBase]] = {"gzip": _gunzip, "bzip2": _bunzip}
# what each limit of an upload counts, and the setting that sets it
LIMITS = {
    "bytes": ("the file is larger than the limit of {} bytes", "MAX_UPLOAD_BYTES"),
    "decompressed": (
        "the decompressed size exceeds the limit of {} bytes",
        "MAX_UPLOAD_DECOMPRESSED_BYTES",
    ),
    "values": (
        "the file holds more than {} feature values, this server's limit for an upload",
        "API_MAX_UPLOAD_VALUES",
    ),
}


class UploadTooLarge(Exception):
    """An upload over one of its limits (:data:`LIMITS`): as sent, once decompressed, or in
    feature values; the message names the limit and its setting."""

    def __init__(self, limit: int, what: str = "bytes") -> None:
        text, setting = LIMITS[what]
        super().__init__(f"{text.format(limit)} (FACEOFF_{setting})")
        self.limit = limit
        self.what = what


@dataclass(frozen=True)
class UploadLimits:
    """What one upload may cost: bytes as sent, bytes decompressed, feature values."""

    max_bytes: int
    max_decompressed: int
    max_values: int

    @classmethod
    def of(cls, settings: Settings) -> UploadLimits:
        return cls(
            settings.MAX_UPLOAD_BYTES,
            settings.MAX_UPLOAD_DECOMPRESSED_BYTES,
            settings.API_MAX_UPLOAD_VALUES,
        )


def display_name(filename: str) -> str:
    """The last component of a client's file name, the only part ever shown or used."""
    return PurePath(filename.replace("\\", "/")).name or "upload"


def compression(head: bytes) -> str | None:
    """ "gzip" or "bzip2" when ``head`` starts with their magic bytes, None otherwise."""
    return next((kind for magic, kind in MAGIC.items() if head.startswith(magic)), None)


def container(head: bytes) -> str | None:
    """The container format ``head`` starts with: "gzip", "bzip2", "zip", "xz", …; None
    for anything else (text, or data that is no container)."""
    found = compression(head)
    return found or next((kind for magic, kind in FOREIGN.items() if head.startswith(magic)), None)


class ValueCounter:
    """Counts the feature values of svmlight text fed in chunks, to refuse an upload with
    more than ``limit`` of them (UploadTooLarge) while it streams in.

    A value is an ``index:value`` token: the colons of the text outside comments (``#`` to
    the end of the line), less ``qid:``. A chunk without ``#`` is counted by two C-level
    scans; the comment state carries over chunk boundaries.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.values = 0
        self.in_comment = False

    def feed(self, chunk: bytes) -> None:
        if not self.in_comment and b"#" not in chunk:
            self.values += chunk.count(b":") - chunk.count(b"qid:")
        else:
            self._feed_with_comments(chunk)
        if self.values > self.limit:
            raise UploadTooLarge(self.limit, "values")

    def _feed_with_comments(self, chunk: bytes) -> None:
        position = 0
        while position < len(chunk):
            if self.in_comment:
                end = chunk.find(b"\n", position)
                if end < 0:
                    return
                self.in_comment, position = False, end + 1
                continue
            comment = chunk.find(b"#", position)
            stop = len(chunk) if comment < 0 else comment
            colons = chunk.count(b":", position, stop) - chunk.count(b"qid:", position, stop)
            self.values += colons
            if comment < 0:
                return
            self.in_comment, position = True, comment + 1


class _Bounded:
    """``stream`` read through, ``head`` (its first bytes, already read) first; raises
    UploadTooLarge once more than ``limit`` bytes have come from it."""

    def __init__(self, stream: Readable, head: bytes, limit: int) -> None:
        self.stream = stream
        self.head = head
        self.limit = limit
        self.count = len(head)

    def seekable(self) -> bool:
        return False

    def seek(self, offset: int, /) -> int:
        raise io.UnsupportedOperation("an upload is read once, as it streams in")

    def read(self, size: int = -1, /) -> bytes:
        if self.head:
            out = self.head if size < 0 else self.head[:size]
            self.head = self.head[len(out) :]
            return out
        data = self.stream.read(size)
        self.count += len(data)
        if self.count > self.limit:
            raise UploadTooLarge(self.limit)
        return data


def receive(
    stream: Readable, upload_dir: Path, filename: str, limits: UploadLimits
) -> tuple[Path, str]:
    """Store an upload as plain text in a temporary file of ``upload_dir``.

    Returns (path, sha256 of the plain text). Raises :class:`UploadTooLarge` as soon as the
    upload passes one of ``limits`` (bytes as sent, bytes decompressed, feature values), and
    SpecError at ``("file",)`` for corrupt compressed data or a container this server does not
    take (zip, xz, …, or a second layer inside gzip or bzip2); no file is left behind then.
    Memory: one chunk, whatever the upload expands to.
    """
    name = display_name(filename)
    head = stream.read(HEAD)
    if head is None:  # a non-blocking stream with nothing yet: none is ever given
        head = b""
    kind = compression(head)
    foreign = container(head)
    if foreign is not None and kind is None:
        raise SpecError(
            ("file",),
            f"{name}: {foreign} data; upload svmlight text, plain or compressed with gzip or bzip2",
        )
    upload_dir.mkdir(parents=True, exist_ok=True)
    text = _temporary(upload_dir)
    source = _Bounded(stream, head, limits.max_bytes)
    try:
        with open(text, "wb") as out:
            if kind is None:
                return text, _copy(source, out, limits, None, name)
            try:
                with OPENERS[kind](source) as plain:
                    return text, _copy(plain, out, limits, kind, name)
            except (OSError, EOFError, zlib.error) as err:
                raise SpecError(("file",), f"{name}: not valid {kind} data ({err})") from None
    except BaseException:
        text.unlink(missing_ok=True)
        raise


def _copy(
    source: Readable, out: BinaryIO, limits: UploadLimits, kind: str | None, name: str
) -> str:
    """Copy ``source`` (plain text; decompressed ``kind`` data) to ``out`` one chunk at a
    time, counting its values; its sha256, or UploadTooLarge past ``limits`` (the
    decompressed size of ``kind`` data), or SpecError for a container inside ``kind``."""
    digest = hashlib.sha256()
    counter = ValueCounter(limits.max_values)
    size = 0
    while chunk := source.read(CHUNK):
        if size == 0 and kind is not None and (inner := container(chunk[:HEAD])) is not None:
            raise SpecError(
                ("file",),
                f"{name}: {kind} data holding {inner} data; upload svmlight text compressed "
                "once, with gzip or bzip2",
            )
        size += len(chunk)
        if kind is not None and size > limits.max_decompressed:
            raise UploadTooLarge(limits.max_decompressed, "decompressed")
        counter.feed(chunk)
        digest.update(chunk)
        out.write(chunk)
    return digest.hexdigest()


def _blocks(path: Path, name: str) -> Iterator[tuple[int, bytes]]:
    """(number of the first line, block) of the file at ``path``: whole lines, about CHUNK
    bytes a block; SpecError at ``("file",)`` for a line longer than MAX_LINE_BYTES."""
    line = 1
    pending: list[bytes] = []  # the start of a line longer than the chunks read so far
    pending_bytes = 0
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            cut = chunk.rfind(b"\n")
            if cut < 0:
                pending.append(chunk)
                pending_bytes += len(chunk)
                if pending_bytes > MAX_LINE_BYTES:
                    raise SpecError(
                        ("file",),
                        f"{name}: line {line} is longer than {MAX_LINE_BYTES} bytes, the "
                        "longest accepted",
                    )
                continue
            block = b"".join((*pending, chunk[: cut + 1]))
            pending, pending_bytes = [chunk[cut + 1 :]], len(chunk) - cut - 1
            yield line, block
            line += block.count(b"\n")
    rest = b"".join(pending)
    if rest:
        yield line, rest


def _count_exactly(block: bytes, first: int, name: str, samples: int, nnz: int, caps: Caps) -> None:
    """Count the examples and values of ``block`` (lines ``first``…) line by line on top
    of ``samples`` and ``nnz`` (comments and blank lines aside), raising DatasetTooLarge at
    ``("file",)`` at the line where a cap is passed."""
    locs = dict.fromkeys(("n_samples", "nnz"), ("file",))
    for number, line in enumerate(io.BytesIO(block), start=first):
        tokens = line.split(b"#", 1)[0].split()
        if tokens:
            samples += 1
            nnz += sum(1 for token in tokens[1:] if not token.startswith(b"qid:"))
            if samples > caps.n_samples or nnz > caps.nnz:
                caps.check(f"{name} (up to line {number})", locs, n_samples=samples, nnz=nnz)


def _parse_block(
    block: bytes, first: int, name: str, n_features: int | None
) -> tuple[int, int, int, np.ndarray]:
    """(rows, columns, values, labels) of one block of whole lines, lines ``first``…, parsed as the
    worker parses a file (:func:`faceoff.data.svmlight.read_svmlight`): SpecError
    ``FILE: line N: problem`` at ``("file",)`` for the first invalid line."""
    # sklearn.datasets (a second to import) only once a file is parsed
    from sklearn.datasets import load_svmlight_file

    try:
        A, b = load_svmlight_file(
            io.BytesIO(block), n_features=n_features, dtype=np.float64, zero_based=False
        )
    except (ValueError, OverflowError) as err:
        raise _located(block, first, name, n_features) or SpecError(
            ("file",), f"{name}: not a valid svmlight file ({err}); {FORMAT_HINT}"
        ) from None
    if not (np.all(np.isfinite(A.data)) and np.all(np.isfinite(b))):
        raise _located(block, first, name, n_features) or SpecError(
            ("file",), f"{name}: contains NaN or inf values"
        )
    return A.shape[0], A.shape[1] if A.nnz else 0, int(A.nnz), b


def _located(block: bytes, first: int, name: str, n_features: int | None) -> SpecError | None:
    """The error of the first invalid line of ``block`` (lines ``first``…), or None."""
    for number, line in enumerate(io.BytesIO(block), start=first):
        problem = line_problem(line, n_features)
        if problem is not None:
            return SpecError(("file",), f"{name}: line {number}: {problem}")
    return None


def validate(
    path: Path, filename: str, n_features: int | None, caps: Caps
) -> tuple[int, int, int, np.ndarray]:
    """(n_samples, n_features, nnz, labels) of the plain svmlight file ``path``, read in
    blocks of whole lines (memory: one block and the labels, one value a sample, whatever the
    file's size or declared width).

    SpecError ``FILE: line N: problem`` at ``("file",)`` when it is not valid (the rules of
    :func:`faceoff.data.svmlight.read_svmlight`, which a worker reads it with), and
    DatasetTooLarge when ``n_features`` or the file's shape exceed ``caps``, as soon as a
    block passes them (a block whose line and colon counts could pass them is counted line
    by line first, so the error names the line).
    """
    check_source({"kind": "upload", "n_features": n_features}, caps)
    name = display_name(filename)
    samples = nnz = width = 0
    labels: list[np.ndarray] = []
    for first, block in _blocks(path, name):
        if samples + block.count(b"\n") + 1 > caps.n_samples or nnz + block.count(b":") > caps.nnz:
            _count_exactly(block, first, name, samples, nnz, caps)
        rows, columns, values, b = _parse_block(block, first, name, n_features)
        samples, nnz, width = samples + rows, nnz + values, max(width, columns)
        labels.append(b)
        caps.check(name, {"n_features": ("file",)}, n_features=width)
    if samples == 0:
        raise SpecError(("file",), f"{name}: no data: the file is empty or holds only comments")
    if nnz == 0:
        raise SpecError(("file",), f"{name}: no feature values: every line holds only a label")
    return samples, n_features or width, nnz, np.concatenate(labels)


def _temporary(folder: Path) -> Path:
    fd, name = tempfile.mkstemp(dir=folder, suffix=".part")
    os.close(fd)
    return Path(name)


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
    would be: within the same limits and caps, with the same ``FILE: line N: problem``
    errors, then parsed whole. A compressed file is decompressed into a temporary folder
    first."""
    if path.stat().st_size > settings.MAX_UPLOAD_BYTES:
        raise UploadTooLarge(settings.MAX_UPLOAD_BYTES)
    caps = Caps.of(settings)
    with tempfile.TemporaryDirectory() as folder, open(path, "rb") as f:
        text, _ = receive(f, Path(folder), path.name, UploadLimits.of(settings))
        validate(text, path.name, None, caps)
        return read_svmlight(text)


def store_upload(stream: Readable, filename: str, settings: Settings) -> tuple[Path, str]:
    """Receive an upload into the upload folder: (temporary path, sha256), see
    :func:`receive` (UploadTooLarge past the settings' limits)."""
    return receive(stream, settings.upload_dir, filename, UploadLimits.of(settings))


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

    The file is validated first, in blocks (:func:`validate`: SpecError ``FILENAME: line N:
    problem`` at ``("file",)``, DatasetTooLarge over ``caps``; the temporary file is
    removed); a valid file is kept as ``<sha256>.svm`` next to ``path``. Returns (dataset,
    created) as :func:`faceoff.core.datasets.register_dataset`.
    """
    try:
        check_text_at(name, ("name",))
        stored = f"{sha256}.svm"
        source = {"kind": "upload", "file": stored, "n_features": n_features}
        check_public_name(name, source)
        n, d, nnz, b = validate(path, filename, n_features, caps)
        existing = find_dataset(session, name, team_id=team_id)
        if existing is not None and existing.source != source:
            raise name_taken(existing)
        path.replace(path.parent / stored)
    finally:
        path.unlink(missing_ok=True)
    if existing is not None:
        return existing, False
    shape = {"n_samples": n, "n_features": d, "nnz": nnz}
    labels = summarize(b)  # the labels as parsed: core.labels checks jobs against them
    return add_dataset(
        session,
        Dataset(name=name, source=source, sha256=sha256, team_id=team_id, labels=labels, **shape),
    )


def upload_dataset(
    session: Session,
    stream: Readable,
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
