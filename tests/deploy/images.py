"""Images for the compose file, built here without an image registry.

* ``faceoff-test/debian``: ``debootstrap --variant=minbase bookworm``, trimmed as Debian's
  slim images are (no documentation, man pages or translations; apt keeps no packages or
  lists), and brought in with ``docker import``. The root file system is kept as a tarball in
  the cache folder, so it is made once per machine.
* ``faceoff-test/python``, ``faceoff-test/postgres``, ``faceoff-test/redis``: Debian's python3
  (with pip and a venv), postgresql and redis-server on it (images/*.Dockerfile), standing in
  for python:3.11-slim, postgres:16 and redis:7.
* ``faceoff-test/app``: the repository's own Dockerfile with ``PYTHON_IMAGE`` set to the
  python image above; pip reads PyPI through a caching index on loopback (pypi_cache.py).

Each tag ends with a hash of everything its image is built from (its Dockerfile, the image
below it, and for the app pyproject.toml and every file the Dockerfile copies), so an image
whose inputs are unchanged is reused without a build; the app's dependency layer is keyed by
the requirement list alone, so an edit of the sources rebuilds only the last layers.
Builds use the legacy builder (BuildKit would ask a registry about the local base images)
with the host's network (no NAT needed while building). The cache folder is
``FACEOFF_COMPOSE_CACHE``, default ~/.cache/faceoff-compose.

``python -m tests.deploy.images`` builds them all and prints the tags and timings.
"""

from __future__ import annotations

import fcntl
import fnmatch
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.deploy.engine import docker, run
from tests.deploy.pypi_cache import CacheServer, normalize, pypi_cache

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent / "images"
CACHE = Path(os.environ.get("FACEOFF_COMPOSE_CACHE") or Path.home() / ".cache" / "faceoff-compose")
PREFIX = "faceoff-test"

SUITE, VARIANT = "bookworm", "minbase"
MIRROR = os.environ.get("FACEOFF_DEBIAN_MIRROR", "http://deb.debian.org/debian")
# as Debian's slim images: dpkg skips documentation and translations from here on
DPKG_EXCLUDES = """\
path-exclude /usr/share/doc/*
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
"""
APT_CONF = """\
APT::Install-Recommends "false";
APT::Keep-Downloaded-Packages "false";
Acquire::Languages "none";
"""
TRIMMED = (
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
    "usr/share/locale",
    "usr/share/lintian",
    "var/cache/apt",
    "var/lib/apt/lists",
)
IMPORT_CHANGES = (
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    'CMD ["bash"]',
)
BUILD_TIMEOUT = 1800
# The peer the Dockerfile compiles from its sdist (no wheels on PyPI), compiled here once per
# python image with the Dockerfile's own commands; the caching index lists the wheel beside
# the sdist, so a rebuilt dependency layer installs it instead of compiling for two minutes.
COMPILED = "sklearn-contrib-lightning"
COMPILE_SCRIPT = f"""set -e
apt-get update
apt-get install -y --no-install-recommends g++ gcc libc6-dev
pip install numpy cython "setuptools>=77,<81" wheel
pip wheel --no-deps --no-build-isolation --wheel-dir /wheels {COMPILED}
"""


@dataclass
class Images:
    """The tags of the built images and what each step took (seconds)."""

    app: str = ""
    postgres: str = ""
    redis: str = ""
    python: str = ""
    debian: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    built: list[str] = field(default_factory=list)  # the tags that were built, not reused


def _digest(*parts: bytes | str) -> str:
    sha = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        sha.update(len(data).to_bytes(8, "little"))
        sha.update(data)
    return sha.hexdigest()[:16]


def image_id(tag: str) -> str | None:
    result = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Id}}", tag], capture_output=True, text=True
    )
    return result.stdout.strip() if result.returncode == 0 else None


def _drop_other_tags(repository: str, keep: str) -> None:
    """Untag the older builds of ``repository`` (layers still used by ``keep`` stay)."""
    listed = docker("image", "ls", "--format", "{{.Repository}}:{{.Tag}}", repository)
    for tag in listed.stdout.split():
        if tag != keep:
            subprocess.run(["docker", "image", "rm", tag], capture_output=True)


@contextmanager
def _timed(images: Images, step: str) -> Iterator[None]:
    start = time.monotonic()
    try:
        yield
    finally:
        images.timings[step] = round(time.monotonic() - start, 1)


def _build(
    images: Images, tag: str, dockerfile: Path, context: Path, args: dict[str, str], log: Path
) -> None:
    """``docker build`` of ``tag``; the steps that took a second or more are added to the
    timings as "<image> step N: <instruction>"."""
    argv = ["docker", "build", "--force-rm", "--network", "host", "-f", str(dockerfile), "-t", tag]
    for key, value in args.items():
        argv += ["--build-arg", f"{key}={value}"]
    env = {**os.environ, "DOCKER_BUILDKIT": "0"}
    name = tag.split("/")[-1].split(":")[0]
    step, started = "", time.monotonic()

    def close_step() -> None:
        seconds = time.monotonic() - started
        if step and seconds >= 1.0:
            images.timings[f"{name} {step}"] = round(seconds, 1)

    with log.open("w") as handle:
        process = subprocess.Popen(
            [*argv, str(context)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            text=True,
            errors="replace",
        )
        assert process.stdout is not None
        for line in process.stdout:
            handle.write(line)
            if line.startswith("Step "):
                close_step()
                number, _, instruction = line.removeprefix("Step ").partition(" : ")
                step = f"step {number.split('/')[0]}: {instruction.strip()[:48]}"
                started = time.monotonic()
        close_step()
        returncode = process.wait(BUILD_TIMEOUT)
    if returncode != 0:
        tail = log.read_text(errors="replace")[-6000:]
        raise RuntimeError(f"building {tag} failed ({shlex.join(argv)}), log {log}:\n{tail}")


def _debootstrap_tarball(path: Path) -> None:
    """A trimmed minbase root file system of SUITE as a tarball at ``path``."""
    if shutil.which("debootstrap") is None:
        raise RuntimeError("debootstrap is not installed (Debian package debootstrap)")
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent, prefix="rootfs-") as scratch:
        root = Path(scratch) / "root"
        run(
            ["debootstrap", f"--variant={VARIANT}", SUITE, str(root), MIRROR],
            timeout=BUILD_TIMEOUT,
        )
        for relative in TRIMMED:
            target = root / relative
            if target.is_dir():
                for child in target.iterdir():
                    if child.name == "locale.alias":
                        continue
                    if child.is_dir() and not child.is_symlink():
                        shutil.rmtree(child)
                    else:
                        child.unlink()
        (root / "var/cache/apt/archives/partial").mkdir(parents=True, exist_ok=True)
        (root / "var/lib/apt/lists/partial").mkdir(parents=True, exist_ok=True)
        (root / "etc/dpkg/dpkg.cfg.d/faceoff-slim").write_text(DPKG_EXCLUDES)
        (root / "etc/apt/apt.conf.d/90faceoff-slim").write_text(APT_CONF)
        partial = path.with_suffix(".partial")
        run(["tar", "--numeric-owner", "-C", str(root), "-cf", str(partial), "."])
        os.replace(partial, path)


def debian_image(images: Images) -> str:
    recipe = _digest(SUITE, VARIANT, MIRROR, DPKG_EXCLUDES, APT_CONF, *TRIMMED, *IMPORT_CHANGES)
    tag = f"{PREFIX}/debian:{SUITE}-{recipe}"
    if image_id(tag) is None:
        tarball = CACHE / f"debian-{SUITE}-{VARIANT}-{recipe}.tar"
        if not tarball.exists():
            with _timed(images, "debootstrap"):
                _debootstrap_tarball(tarball)
        with _timed(images, "docker import"):
            changes = [arg for change in IMPORT_CHANGES for arg in ("--change", change)]
            docker("import", *changes, str(tarball), tag)
        images.built.append(tag)
        _drop_other_tags(f"{PREFIX}/debian", tag)
    return tag


def _service_image(images: Images, name: str, base: str) -> str:
    dockerfile = HERE / f"{name}.Dockerfile"
    inputs = [dockerfile, *sorted(HERE.glob(f"{name}-*"))]
    key = _digest(image_id(base) or base, *(p.name + p.read_text() for p in inputs))
    tag = f"{PREFIX}/{name}:{key}"
    if image_id(tag) is None:
        with _timed(images, f"build {name}"):
            _build(images, tag, dockerfile, HERE, {"BASE_IMAGE": base}, CACHE / f"build-{name}.log")
        images.built.append(tag)
        _drop_other_tags(f"{PREFIX}/{name}", tag)
    return tag


def _context_files() -> list[Path]:
    """What the repository's Dockerfile copies from the context (its COPY sources, without
    the .dockerignore'd caches), with the Dockerfile and .dockerignore themselves."""
    dockerfile = REPO / "Dockerfile"
    ignore = REPO / ".dockerignore"
    skipped = [
        line.removeprefix("**/")
        for line in ignore.read_text().splitlines()
        if line.startswith("**/")
    ]
    sources: set[str] = set()
    for line in dockerfile.read_text().splitlines():
        words = line.split()
        if words[:1] == ["COPY"] and not any(w.startswith("--from") for w in words):
            sources.update(words[1:-1])
    files = [dockerfile, ignore]
    for source in sorted(sources):
        path = REPO / source
        if path.is_file():
            files.append(path)
            continue
        for found in sorted(path.rglob("*")):
            parts = found.relative_to(REPO).parts
            if found.is_file() and not any(
                fnmatch.fnmatch(part, pattern) for part in parts for pattern in skipped
            ):
                files.append(found)
    return files


def app_key(python_tag: str) -> str:
    files = _context_files()
    return _digest(
        image_id(python_tag) or python_tag,
        *(str(f.relative_to(REPO)).encode() + b"\0" + f.read_bytes() for f in files),
    )


def _compiled_wheel(images: Images, python: str, index: CacheServer) -> None:
    """The wheel of COMPILED for ``python``'s interpreter, in the index's built folder."""
    assert index.built is not None
    folder = index.built / normalize(COMPILED)
    if any(folder.glob("*.whl")):
        return
    folder.mkdir(parents=True, exist_ok=True)
    with _timed(images, f"compile {COMPILED}"), tempfile.TemporaryDirectory(dir=folder) as out:
        docker(
            *("run", "--rm", "--network", "host", "--volume", f"{out}:/wheels"),
            *("--env", f"PIP_INDEX_URL=http://{index.host}/simple/"),
            *("--env", "PIP_TRUSTED_HOST=127.0.0.1"),
            *(python, "sh", "-c", COMPILE_SCRIPT),
            timeout=BUILD_TIMEOUT,
        )
        for wheel in Path(out).glob("*.whl"):  # whole wheels only, once the build succeeded
            os.replace(wheel, folder / wheel.name)


def _app_image(images: Images, python: str) -> str:
    tag = f"{PREFIX}/app:{app_key(python)}"
    if image_id(tag) is None:
        built = CACHE / "pypi" / "built" / _digest(image_id(python) or python)
        with _timed(images, "build app"), pypi_cache(CACHE / "pypi", built) as index:
            _compiled_wheel(images, python, index)
            args = {
                "PYTHON_IMAGE": python,
                "PIP_INDEX_URL": f"http://{index.host}/simple/",
                "PIP_TRUSTED_HOST": "127.0.0.1",
            }
            _build(images, tag, REPO / "Dockerfile", REPO, args, CACHE / "build-app.log")
        images.built.append(tag)
        _drop_other_tags(f"{PREFIX}/app", tag)
    return tag


def build_images() -> Images:
    """Every image the compose test runs, built or reused; one build at a time per machine."""
    CACHE.mkdir(parents=True, exist_ok=True)
    images = Images()
    with (CACHE / "build.lock").open("w") as lock, _timed(images, "images (total)"):
        fcntl.flock(lock, fcntl.LOCK_EX)
        images.debian = debian_image(images)
        images.python = _service_image(images, "python", images.debian)
        images.postgres = _service_image(images, "postgres", images.debian)
        images.redis = _service_image(images, "redis", images.debian)
        images.app = _app_image(images, images.python)
    return images


def image_size(tag: str) -> str:
    size = int(docker("image", "inspect", "--format", "{{.Size}}", tag).stdout)
    return f"{size / 1e6:.0f} MB"


def main() -> int:
    images = build_images()
    for name in ("debian", "python", "postgres", "redis", "app"):
        tag = getattr(images, name)
        state = "built" if tag in images.built else "reused"
        print(f"{name:9} {tag:45} {image_size(tag):>8}  {state}")
    for step, seconds in images.timings.items():
        print(f"{step:16} {seconds:7.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
