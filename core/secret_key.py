"""The secret key that signs the dashboard's login sessions (``FACEOFF_SECRET_KEY``): whether
it can protect them.

Anyone who knows the key can forge a session cookie and log in as any token's team, so a
key is refused (:func:`check_secret_key`) when

- it is empty;
- it is published: one of the placeholders and test keys of :data:`KNOWN_SECRET_KEYS`, or any
  text of the shipped package or, where it is there, of the repository the package runs from
  (README, docs, tests, examples: :func:`published`) contains it;
- its estimated entropy is below :data:`MIN_ENTROPY_BITS` (32 bytes), see
  :func:`entropy_bits`.

``faceoff secret`` prints a key made by :func:`make_secret_key` (48 random bytes).
"""

from __future__ import annotations

import math
import secrets
import string
import zlib
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

MIN_ENTROPY_BITS = 256  # 32 bytes
SECRET_BYTES = 48  # what `faceoff secret` draws: 384 bits, 64 characters
MAKE_SECRET_KEY = "`faceoff secret`"
# placeholders and test keys that were published (docs, examples, tests): anyone can read
# them, so anyone could sign a session. Any other text of the repository is found by
# published(), this list also in an installation without the repository.
KNOWN_SECRET_KEYS = frozenset(
    {
        "change-me-to-a-long-random-string",
        "change-me",
        "changeme",
        "secret",
        "secret-key",
        "test-secret-key-for-signing-sessions",
        "adversarial-test-secret-key-0123456789abcdef",
    }
)
# the alphabets a key may be written in, smallest first: a key is credited log2(size) bits
# a character for the smallest one that holds all its characters
HEX = frozenset(string.hexdigits)
BASE64 = frozenset(string.ascii_letters + string.digits + "-_+/=")  # RFC 4648, both kinds
PRINTABLE = frozenset(string.ascii_letters + string.digits + string.punctuation + " ")
ALPHABETS = ((HEX, 16), (BASE64, 64), (PRINTABLE, 95))
ZLIB_FRAME_BYTES = 6  # zlib's header (2 bytes) and Adler-32 checksum (4): no information
# where published() looks: text files by suffix, in the package and the repository
TEXT_SUFFIXES = frozenset(
    {".py", ".md", ".toml", ".yml", ".yaml", ".txt", ".ini", ".cfg", ".json", ".sh", ".mako"}
)
TEXT_NAMES = frozenset({".env.example", "Dockerfile", "Makefile"})
SKIPPED_FOLDERS = frozenset({"venv", "node_modules", "build", "__pycache__"})  # and hidden ones
MAX_TEXT_BYTES = 1 << 20  # larger files are data, not docs


class InsecureSecretKey(RuntimeError):
    """FACEOFF_SECRET_KEY cannot protect the login sessions; the message says how to fix it."""


def make_secret_key() -> str:
    """A new key: :data:`SECRET_BYTES` random bytes, URL-safe base64 (64 characters)."""
    return secrets.token_urlsafe(SECRET_BYTES)


def entropy_bits(key: str) -> float:
    """An estimate of the key's entropy in bits, the smaller of two bounds:

    - its length × log2 of its alphabet's size: the smallest of hexadecimal (16), base64
      (64: letters, digits and ``-_+/=``) and printable ASCII (95) that holds every
      character, or 95 plus its distinct other characters;
    - 8 × its zlib-compressed size (level 9, less the 6 bytes of zlib's frame), which is
      small for a key that repeats itself (``abab…``, a pattern, a word twice).

    ``secrets.token_urlsafe(32)`` (43 characters) rates 258 bits, ``token_hex(32)`` 256.
    """
    if not key:
        return 0.0
    chars = set(key)
    size = next((n for alphabet, n in ALPHABETS if chars <= alphabet), None)
    if size is None:
        size = len(PRINTABLE) + len(chars - PRINTABLE)
    by_alphabet = len(key) * math.log2(size)
    compressed = len(zlib.compress(key.encode("utf-8", "surrogatepass"), 9))
    return min(by_alphabet, 8.0 * (compressed - ZLIB_FRAME_BYTES))


def _root() -> Path:
    """The folder whose texts are published: the repository's root when the package runs
    from it (an editable install: this file is ``core/secret_key.py`` of the repository),
    else the installed package (``faceoff/core/secret_key.py``: ``faceoff/``)."""
    return Path(__file__).resolve().parents[1]


def _text_files(root: Path) -> Iterator[Path]:
    for path in root.iterdir():
        if path.is_dir():
            if not path.name.startswith(".") and path.name not in SKIPPED_FOLDERS:
                yield from _text_files(path)
        elif path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES:
            yield path


@lru_cache(maxsize=1)
def _published_texts() -> tuple[str, ...]:
    texts = []
    for path in _text_files(_root()):
        try:
            if path.stat().st_size <= MAX_TEXT_BYTES:
                texts.append(path.read_text(errors="replace"))
        except OSError:
            continue
    return tuple(texts)


def published(key: str) -> bool:
    """Whether ``key`` is a known placeholder or test key, or appears in a text of the
    package or its repository (docs, examples, tests)."""
    if key.strip().lower() in KNOWN_SECRET_KEYS or "change-me" in key.lower():
        return True
    return any(key in text for text in _published_texts())


def check_secret_key(key: str, setting: str = "FACEOFF_SECRET_KEY") -> None:
    """Raise InsecureSecretKey, naming the problem and how to make a good key, if ``key``
    is empty, below :data:`MIN_ENTROPY_BITS` of estimated entropy (:func:`entropy_bits`) or
    published (:func:`published`)."""
    if not key:
        problem = f"{setting} is required when FACEOFF_AUTH_ENABLED is true"
    elif (bits := entropy_bits(key)) < MIN_ENTROPY_BITS:
        problem = (
            f"{setting} has about {bits:.0f} bits of entropy, fewer than {MIN_ENTROPY_BITS} "
            f"(32 random bytes): {len(key)} characters"
        )
    elif published(key):
        problem = (
            f"{setting} is published (a placeholder, an example or a test key of the "
            "repository), so anyone could forge a login"
        )
    else:
        return
    raise InsecureSecretKey(f"{problem}; set it to a random key printed by {MAKE_SECRET_KEY}")
