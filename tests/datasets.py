"""Real LIBSVM files for the tests, found the way a user's Faceoff finds them.

A test that reads a real file asks for it here, inside the test or a fixture:

- :func:`dataset_file` (``dataset_file("a1a")``): a registered dataset's file, from the
  mirror folder, else the download cache, else downloaded from its official URL and checked
  as Faceoff checks it (the registry's sha256 where known, else the first download's, and
  the parsed shape), by :func:`faceoff.data.fetch.locate` itself;
- :func:`link_datasets`: those files linked into a folder, for a test that needs a mirror
  folder of its own (the CLI's ``faceoff datasets``);
- :func:`local_file`: a file by name that is only read where it already is (the mirror's
  MANIFEST.tsv, the mirror copies the registry test checks, the benchmarks' inputs).

The mirror is ``FACEOFF_DATA_MIRROR``, default ``../shared/datasets`` beside the repository;
a folder that does not exist means no mirror, not an error (Faceoff itself finds no file in
it). When the default folder is used, the test session exports it as ``FACEOFF_DATA_MIRROR``
so that the Faceoff processes the tests start read the same mirror. The download cache is
Faceoff's own (``FACEOFF_DATA_CACHE``, default ``~/.cache/faceoff/datasets``).

A file that cannot be had skips the test locally and fails it when ``CI`` is set (CI must
run every test). The skips are folded into one line of the short test summary that names
every missing file and how to provide it. After one failed download a process tries no
other (an offline machine waits for one timeout, not one per dataset).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import NoReturn

import pytest

from faceoff.data.fetch import cache_dir, locate
from faceoff.data.registry import DatasetUnavailableError, get_spec

REPO = Path(__file__).resolve().parents[1]
DEFAULT_MIRROR = REPO.parent / "shared" / "datasets"
PROPERTY = "libsvm_not_at_hand"  # user property of a skipped test's report: what it lacked

# A need: (name, "download" or "mirror", why). "download": a dataset its official URL could
# provide (the download failed here); "mirror": a file only the dataset mirror holds.
Need = tuple[str, str, str]

_found: dict[str, Path] = {}  # dataset name -> its file, verified once per process
_unavailable: dict[str, Need] = {}  # dataset name -> what is missing
_download_failure = ""  # the first failed download's reason: no other download is tried


def mirror_folder() -> Path | None:
    """The dataset mirror folder (FACEOFF_DATA_MIRROR, default ../shared/datasets), None when
    that folder does not exist."""
    value = os.environ.get("FACEOFF_DATA_MIRROR") or str(DEFAULT_MIRROR)
    path = Path(value).expanduser().absolute()
    return path if path.is_dir() else None


class NotAtHand(pytest.skip.Exception):
    """The skip of a test whose real files are not at hand; ``needs`` lists them."""

    def __init__(self, needs: list[Need]) -> None:
        self.needs = needs
        names = ", ".join(name for name, _, _ in needs)
        super().__init__(f"real LIBSVM data not at hand: {names}")


def dataset_file(name: str) -> Path:
    """The file of the registered dataset ``name``: mirror, cache, else a download."""
    return dataset_files(name)[0]


def dataset_files(*names: str) -> list[Path]:
    """:func:`dataset_file` of each name; one skip (or CI failure) naming all the missing.

    A file that is found but corrupted, or a download that is not the registered file, is a
    :class:`faceoff.data.registry.DatasetError`: the test fails, wherever it runs.
    """
    paths, needs = [], []
    for name in names:
        path = _find(name)
        if path is None:
            needs.append(_unavailable[name])
        else:
            paths.append(path)
    if needs:
        _not_at_hand(needs)
    return paths


def link_datasets(folder: Path, *names: str) -> list[Path]:
    """Link each dataset's file (:func:`dataset_files`) into ``folder`` under its own name,
    making ``folder`` a mirror of those datasets; returns the links."""
    folder.mkdir(parents=True, exist_ok=True)
    links = []
    for path in dataset_files(*names):
        link = folder / path.name
        if not link.exists():
            link.symlink_to(path)
        links.append(link)
    return links


def local_file(file: str, *, cache: bool = False) -> Path:
    """The file named ``file`` in the mirror folder (or, with ``cache``, in the download
    cache), never downloaded; skipped (CI: failed) when it is in neither."""
    folders = [mirror_folder(), cache_dir() if cache else None]
    for folder in folders:
        if folder is not None and (folder / file).is_file():
            return folder / file
    _not_at_hand([(file, "mirror", "")])


def _find(name: str) -> Path | None:
    """The verified file of ``name``, or None (its need recorded in ``_unavailable``)."""
    global _download_failure
    if name in _found and _found[name].is_file():
        return _found[name]
    if name in _unavailable:
        return None
    spec = get_spec(name)
    downloadable = any(source.url for source in spec.sources)
    if downloadable and _download_failure and not _at_hand(spec.sources):
        _unavailable[name] = (name, "download", _download_failure)
        return None
    try:
        found = locate(spec, mirror=mirror_folder(), cache=cache_dir(), progress=False)
    except DatasetUnavailableError as err:
        if downloadable:
            reason = str(err).rpartition(" failed: ")[2].partition("; put ")[0]
            _download_failure = _download_failure or reason
            _unavailable[name] = (name, "download", _download_failure)
        else:
            _unavailable[name] = (spec.sources[0].file, "mirror", "")
        return None
    _found[name] = found.path
    return found.path


def _at_hand(sources: Iterable) -> bool:
    folders = [f for f in (mirror_folder(), cache_dir()) if f is not None]
    return any((folder / s.file).is_file() for folder in folders for s in sources)


def _not_at_hand(needs: list[Need]) -> NoReturn:
    if os.environ.get("CI"):
        pytest.fail(f"{summary(needs)}; CI is set: these tests must run", pytrace=False)
    raise NotAtHand(needs)


def summary(needs: Iterable[Need]) -> str:
    """One line: the missing datasets and files, and how to provide them."""
    needs = list(needs)
    downloads = sorted({name for name, kind, _ in needs if kind == "download"})
    mirror_only = sorted({name for name, kind, _ in needs if kind == "mirror"})
    why = next((why for _, kind, why in needs if kind == "download" and why), "")
    setting = os.environ.get("FACEOFF_DATA_MIRROR")
    if mirror_folder() is not None:
        mirror = f"not in the mirror {mirror_folder()}"
    elif setting:
        mirror = f"FACEOFF_DATA_MIRROR={setting} is not a folder"
    else:
        mirror = f"FACEOFF_DATA_MIRROR unset and no {DEFAULT_MIRROR}"
    parts = []
    if downloads:
        parts.append(
            f"{_count(downloads, 'dataset')} (downloading from the LIBSVM site failed: {why}): "
            + ", ".join(downloads)
        )
    if mirror_only:
        parts.append(
            f"{_count(mirror_only, 'file')} only the mirror holds: {', '.join(mirror_only)}"
        )
    how = "Set FACEOFF_DATA_MIRROR to a copy of the project's dataset mirror"
    if downloads:
        how += f", or run once with network access for the downloads (kept in {cache_dir()})"
    return f"real LIBSVM data not at hand ({mirror}): {'; '.join(parts)}. {how}"


def _count(names: list[str], noun: str) -> str:
    return f"{len(names)} {noun}{'' if len(names) == 1 else 's'}"


# ----------------------------------------------------------------------------- pytest hooks


def pytest_configure(config: pytest.Config) -> None:
    """The Faceoff processes the tests start read the mirror the tests read: the default
    folder, when it exists and FACEOFF_DATA_MIRROR is unset, is exported."""
    mirror = mirror_folder()
    if mirror is not None and not os.environ.get("FACEOFF_DATA_MIRROR"):
        os.environ["FACEOFF_DATA_MIRROR"] = str(mirror)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if call.excinfo is not None and isinstance(call.excinfo.value, NotAtHand):
        report.user_properties.append((PROPERTY, [list(n) for n in call.excinfo.value.needs]))
    return report


def pytest_terminal_summary(terminalreporter) -> None:
    """Every skip for real data not at hand gets one reason, naming all that was missing:
    the short test summary (``-rs``, on by default here) then shows them as one line."""
    skipped = [
        report
        for report in terminalreporter.stats.get("skipped", [])
        if any(key == PROPERTY for key, _ in getattr(report, "user_properties", ()))
    ]
    if not skipped:
        return
    needs = [
        tuple(need)
        for report in skipped
        for key, value in report.user_properties
        if key == PROPERTY
        for need in value
    ]
    line = summary(needs)
    where, lineno, _ = skipped[0].longrepr
    for report in skipped:
        report.longrepr = (where, lineno, line)
    if not terminalreporter.hasopt("skipped"):
        terminalreporter.write_line(f"{len(skipped)} skipped: {line}", yellow=True)
