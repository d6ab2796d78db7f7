"""A persistent cache of compact indexes: a session is read whole once, then only what was appended.

pi only ever appends to a session file (whole lines, one ``appendFileSync`` each), so the index of
its first N bytes stays the index of those bytes.  An entry here holds the ``CompactIndex`` of a
file up to its last newline, keyed by the file's identity (device, inode, path).  Opening the file
again reads the entry, checks that the file still starts with those bytes (``fingerprint``), scans
only the bytes after them and joins that part on, as the two-part read joins its halves
(``compact.join_parts``).  Whatever does not check out (another pisess or format version, a damaged or
cut-short entry, a shorter file, changed bytes, a replaced file) is a miss: the file is read whole,
and the entry is written anew.  The cache makes reads faster, never different.

The library reads without a cache unless the caller configures one (``configure(Settings(...))``);
the CLI does, from ``$XDG_CACHE_HOME``/``PISESS_CACHE`` (``from_environ``), and ``--no-cache``
turns it off for one command.  Entries are written atomically (a temporary file renamed over the
old one) with mode 0600 in a 0700 directory; the directory is kept under ``Settings.cap`` bytes by
removing the least recently used entries (a hit touches its entry's mtime).

What is checked before an entry is used: the file is the same one (device, inode and path), at
least as long as the cached part, the byte before the cached end is its last newline, and a BLAKE2b
fingerprint of the cached part matches (all of it up to 64 KiB, else its first and last 8 KiB and
16 samples of 512 bytes spread between them).  A file that grew by appends passes; a replaced file
(another inode), a shorter one, one whose first line or last cached lines changed (a migration
rewrites the header) fails.  An edit by hand in the middle of a big file that keeps every sampled
byte is the one thing not seen.  The entry carries its format and pisess version, its length and
a CRC-32.  An entry is written after a whole read of a well-formed v3 file that ends with a newline
(damaged and legacy files take the line-by-line path and are not cached), and again once more than
1 MiB was appended since; files under 64 KiB get none (``Settings.smallest``; ``PISESS_CACHE=all``
indexes them too).

Beside the entries: the per-file summaries of the commands that read many files (``ls --long``,
``stats``, ``du``), one bundle per directory and command (10,000 sessions are one read), used only
for the very file they were made of (device, inode, size, mtime and fingerprint); ``watch``'s
state; and the search index (``SEARCH_INDEX``, ``pisess.core.analyses.search``), which the cap
counts as one item with SQLite's files beside it.  ``entries_of`` is what ``pisess cache`` counts
and ``clear`` removes.  No message text is kept but in the search index; a label, a session name,
the header's metadata or a line that is not an object can hold anything its author typed.
"""

from __future__ import annotations

import marshal
import os
import sys
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .compact import CompactIndex

# (the reading modules are imported on first use: the CLI configures this module on every run,
# ``pisess --help`` and shell completion included)

FORMAT = 3  # bump when what an entry holds, or how, changes
MAGIC = b"PISESS-INDEX\n"
SUFFIX = ".idx"
DEFAULT_CAP = 512 << 20  # bytes; a 200 MB session's entry is about 3 MB
# An appended part up to this size is parsed again on every open rather than rewriting the entry
# (writing a 3 MB entry costs more than parsing 1 MiB of lines); a longer one refreshes the entry.
REFRESH_AFTER = 1 << 20
WHOLE_PRINT = 64 << 10  # a prefix up to this size is fingerprinted whole
EDGE, SAMPLES, SAMPLE = 8 << 10, 16, 512  # else its first and last 8 KiB and 16 spread 512-byte samples
SEARCH_INDEX = "search.sqlite"  # the search index (analyses/search/database.py), with SQLite's -wal and -shm beside it
STALE_TEMP = 3600  # seconds after which a temporary file left by a killed pisess is removed


@dataclass(frozen=True)
class Settings:
    """Where the cache lives (``None``: no cache, the library's default) and how big it may grow."""

    directory: str | None = None
    cap: int = DEFAULT_CAP
    # Files smaller than this get no index entry: checking one reads the whole file anyway (the
    # fingerprint of up to ``WHOLE_PRINT`` bytes is all of them), and writing 10,000 entries for
    # 10,000 small sessions costs more than it ever saves.
    smallest: int = WHOLE_PRINT


_settings = Settings()


def configure(settings: Settings) -> Settings:
    """Use ``settings`` from now on; the previous ones are returned."""
    global _settings
    previous, _settings = _settings, settings
    return previous


def current() -> Settings:
    return _settings


def default_directory(environ: Mapping[str, str], home: str) -> str:
    """``$XDG_CACHE_HOME/pisess`` (an absolute ``XDG_CACHE_HOME`` only, as the XDG spec says),
    else ``~/.cache/pisess``."""
    base = environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(home, ".cache")
    return os.path.join(base, "pisess")


def from_environ(environ: Mapping[str, str], home: str) -> Settings:
    """The CLI's settings: the default directory, or none with ``PISESS_CACHE=off`` (also ``0``,
    ``no``, ``false``); ``PISESS_CACHE=all`` indexes small files too (the tests' warm runs)."""
    value = environ.get("PISESS_CACHE", "").strip().lower()
    off = value in ("off", "0", "no", "false")
    return Settings(directory=None if off else default_directory(environ, home),
                    smallest=0 if value == "all" else Settings.smallest)


# --- the read ------------------------------------------------------------------------------------


def scan(path: str, scan_compact: Callable[[str], CompactIndex | None] | None = None) -> CompactIndex | None:
    """``scan_compact(path)`` (``compact.scan_compact`` unless given), through the cache when one
    is configured: the same index, read from the cached prefix and the bytes appended since where
    the file checks out."""
    if scan_compact is None:
        from .compact import scan_compact as default_scan

        scan_compact = default_scan
    directory = _settings.directory
    if directory is None:
        return scan_compact(path)
    try:
        st = os.stat(path)
    except OSError:
        return scan_compact(path)  # the scan reports what is wrong
    import stat as stat_mod

    if not stat_mod.S_ISREG(st.st_mode) or st.st_size < _settings.smallest:
        return scan_compact(path)
    entry = entry_path(directory, path, st)
    ix = _from_entry(entry, path, st)
    if ix is not None:
        return ix
    ix = scan_compact(path)
    if ix is not None:
        _store(entry, path, st, ix)
    return ix


@dataclass(frozen=True)
class Prefix:
    """What the cache holds of an index's file (``CompactIndex.cached``): the entry, the bytes it
    covers (``size``, checked by ``print_``), how many entries they hold, and the per-file
    summaries kept for them (``fold``)."""

    entry: str
    size: int
    print_: bytes
    count: int
    summaries: dict


def blake2b(data: bytes = b"", *, digest_size: int) -> Any:
    """``hashlib.blake2b``, taken where hashlib takes it (the interpreter's ``_blake2``) without
    importing hashlib, which loads OpenSSL: 3-4 ms of a run that checks a cached file."""
    try:
        from _blake2 import blake2b as made
    except ImportError:  # pragma: no cover - another Python
        from hashlib import blake2b as made
    return made(data, digest_size=digest_size)


def entry_path(directory: str, path: str, st: os.stat_result) -> str:
    """The entry of the file at ``path`` with ``st``'s device and inode."""
    key = f"{st.st_dev}:{st.st_ino}:{os.path.abspath(path)}".encode("utf-8", "surrogateescape")
    return os.path.join(directory, blake2b(key, digest_size=16).hexdigest() + SUFFIX)


def _from_entry(entry: str, path: str, st: os.stat_result) -> CompactIndex | None:
    """The index of ``path`` from its entry and the bytes after the cached end, or ``None``."""
    from .compact import join_parts, scan_part

    got = _load(entry)
    if got is None:
        return None
    meta, ix = got
    cached_path, dev, ino, size, print_ = meta
    if (cached_path, dev, ino) != (os.path.abspath(path), st.st_dev, st.st_ino) or st.st_size < size:
        return None
    try:
        with open(path, "rb") as fh:
            if fingerprint(fh, size) != print_:
                return None
    except OSError:
        return None
    try:
        os.utime(entry)  # recently used (eviction removes the oldest first)
    except OSError:
        pass
    ix.cached = Prefix(entry, size, print_, len(ix.ids), _load_summaries(entry, size, print_))
    if st.st_size == size:
        return ix
    more = scan_part(path, start=size, expect_header=False)
    if more is None or _identity_keys(more) or join_parts(ix, more) is None:
        return None  # the whole read decides what the appended part means
    if ix.ends_with_newline and ix.size - size > REFRESH_AFTER:
        _store(entry, path, os.stat(path), ix)
    return ix


def fold(session: Any, name: str, step: Callable[[Any, Any], Any], wanted: Callable[[Any], Any] | None,
         known: Any = None) -> Any:
    """``step(session.iter_complete(wanted), None)``: a per-file summary folded over the entries in
    file order (``step(entries, state)`` continues from ``state``).  Where the session's index came
    from the cache, the state of the cached prefix is kept beside its entry and only the entries
    after it are read back; the additions happen in the same order, so the result is the same.

    ``known``: the state over every entry when the caller has it already (gathered during the
    read); it is the answer, and kept beside an entry just written for the same entries."""
    note = session.store.cached_prefix()
    if known is not None:
        if note is not None and note.count == len(session.store) and name not in note.summaries:
            note.summaries[name] = known
            _store_summaries(note)
        return known
    if note is None or note.count > len(session.store):
        return step(session.iter_complete(wanted), None)
    state = note.summaries.get(name)
    if state is None:
        state = step(session.iter_complete(wanted, stop=note.count), None)
        note.summaries[name] = state
        _store_summaries(note)
    return step(session.iter_complete(wanted, start=note.count), state)


def _identity_keys(ix: CompactIndex) -> bool:
    """Keys of ids that are objects (compared by identity): they cannot be written or joined."""
    return any(type(k) is tuple and k[0] == "obj" for k in ix.key_of)


def fingerprint(fh: Any, size: int) -> bytes:
    """A digest of the file's first ``size`` bytes: all of them up to ``WHOLE_PRINT``, else the
    first and last ``EDGE`` bytes and ``SAMPLES`` samples spread between them."""
    h = blake2b(digest_size=16)
    h.update(size.to_bytes(8, "little"))
    if size <= WHOLE_PRINT:
        spans = [(0, size)]
    else:
        step = (size - 2 * EDGE) // (SAMPLES + 1)
        spans = [(0, EDGE), *((EDGE + k * step, SAMPLE) for k in range(1, SAMPLES + 1)), (size - EDGE, EDGE)]
    for offset, length in spans:
        fh.seek(offset)
        data = fh.read(length)
        if len(data) != length:
            return b""
        h.update(data)
    return h.digest()


# --- the entry's format ------------------------------------------------------------------------------
#
# MAGIC, a stamp line (format, pisess version, the interpreter's marshal), then a marshal'd tuple
# (plain values only: marshal builds no objects but numbers, strings, bytes and containers), then
# its length and CRC-32.  A stamp that differs is another version's entry: a miss, replaced.

_UNDEF_KEY = ("undef",)


def _stamp() -> bytes:
    from pisess import __version__

    return f"{FORMAT} {__version__} {sys.implementation.cache_tag} {marshal.version}\n".encode()


def _encode(path: str, st: os.stat_result, ix: CompactIndex, print_: bytes) -> bytes | None:
    from .. import js
    from .jsonl import Light

    ids: Any = ix.ids
    if None not in ids:
        joined = "\n".join(ids)
        if joined.count("\n") == len(ids) - 1 and ids:
            ids = joined  # one string: one copy to load, split in one call
    keys = []
    for k, p in ix.key_of.items():
        if type(k) is tuple and k[0] == "obj":
            return None
        keys.append((_UNDEF_KEY if k is js.UNDEF else k, p))
    extras = []
    for p, e in ix.extras.items():
        if type(e) is Light:
            extras.append((p, dict(e), e.offset, e.length))
        else:
            extras.append((p, e, -1, -1))
    unique = ix.ids_unique()  # (what the reader of the entry may skip building: defer_pos_of)
    extra_parents = ix.resolved_extra_parents() if unique else {}
    value = (
        (os.path.abspath(path), st.st_dev, st.st_ino, ix.size, print_),
        ids, ix.parents.tobytes(), ix.other_parents, ix.offsets.tobytes(),
        None if ix.lines is None else ix.lines.tobytes(), None if ix.lengths is None else ix.lengths.tobytes(),
        ix.first_line, ix.last_length, bytes(ix.roles), [s["role"] for s in ix.role_stubs], bytes(ix.stamps),
        extras, ix.header, ix.harness_error, ix.cli_plain, ix.sdk_marker, ix.size, ix.ends_with_newline,
        ix.line_count, ix.roots, keys, unique, extra_parents, ix.cuts,
    )
    return _frame(value)


def _decode(data: bytearray) -> tuple[tuple, CompactIndex] | None:
    """The entry's meta and index.  ``data`` is emptied as soon as it is unpacked, and each field
    is dropped once it is converted: the bytes and the index are never all alive at once, so a
    warm read's peak memory stays under the cold read's (which never holds the whole file)."""
    from .. import js
    from .compact import CompactIndex
    from .jsonl import Light

    fields = list(_unframe(data))
    del data[:]
    take = fields.pop  # from the end, each field released as it is taken
    cuts, extra_parents, unique = take(), take(), take()
    keys, roots, line_count, ends_with_newline, size, sdk_marker, cli_plain, harness_error = (
        take(), take(), take(), take(), take(), take(), take(), take())
    ix = CompactIndex()
    ix.header = take()
    for p, v, offset, length in take():
        if offset >= 0:
            v = Light(v)
            v.offset, v.length, v.index = offset, length, p
        ix.extras[p] = v
    ix.stamps = bytearray(take())
    ix.role_stubs = [{"role": r} for r in take()]
    ix.roles = bytearray(take())
    ix.last_length = take()
    ix.first_line = take()
    lengths, lines = take(), take()
    ix.lengths = None if lengths is None else _array("I", lengths)
    ix.lines = None if lines is None else _array("I", lines)
    del lengths, lines
    ix.offsets = _array("q", take())
    ix.other_parents = take()
    ix.parents = _array("i", take())
    ids = take()
    ix.ids = ids.split("\n") if type(ids) is str else ids
    del ids
    meta = take()
    ix.defer_pos_of(unique, extra_parents)  # (the map from id to position built only if asked for)
    ix.key_of = {(js.UNDEF if k == _UNDEF_KEY else k): p for k, p in keys}
    ix.harness_error, ix.cli_plain, ix.sdk_marker = harness_error, cli_plain, sdk_marker
    ix.size, ix.ends_with_newline, ix.line_count, ix.roots = size, ends_with_newline, line_count, roots
    ix.cuts = cuts
    n = len(ix.ids)
    if len(ix.parents) != n or len(ix.offsets) != n or len(ix.roles) != n or len(ix.stamps) != n * 24 \
            or (ix.lines is not None and len(ix.lines) != n):
        return None
    return meta, ix


def _array(code: str, data: bytes) -> array:
    out = array(code)
    out.frombytes(data)
    return out


def _load(entry: str) -> tuple[tuple, CompactIndex] | None:
    try:
        with open(entry, "rb", buffering=0) as fh:
            data = bytearray(os.fstat(fh.fileno()).st_size)  # (read into: no second copy)
            if fh.readinto(data) != len(data):
                return None
    except OSError:
        return None
    try:
        return _decode(data)
    except Exception:  # noqa: BLE001 - a damaged entry of any shape is a miss, never an answer
        return None


# --- writing ---------------------------------------------------------------------------------------


def _store(entry: str, path: str, st: os.stat_result, ix: CompactIndex) -> None:
    """Write ``ix`` as the entry of ``path`` when it ends at a newline (a half-written last line
    may still be completed: it is parsed again next time).  A cache that cannot be written is no
    error: the read goes on without it."""
    if not ix.ends_with_newline or ix.size == 0 or _identity_keys(ix):
        return
    directory = os.path.dirname(entry)
    try:
        if not ready(directory):
            return
        with open(path, "rb") as fh:
            print_ = fingerprint(fh, ix.size)
        if not print_:
            return
        data = _encode(path, st, ix, print_)
        if data is None:
            return
        write_atomic(entry, data)
        ix.cached = Prefix(entry, ix.size, print_, len(ix.ids), {})
        _unlink(entry[:-len(SUFFIX)] + SUMS)
        _evict_once(directory, entry)
    except OSError:
        return


_evicted: set = set()  # directories kept under the cap by this process since the last ``flush``


def _evict_once(directory: str, keep: str) -> None:
    """``evict`` after the first write of a process (and again at ``flush``), not after every one:
    listing a directory of 10,000 entries after each of 10,000 writes would cost more than the reads."""
    if directory not in _evicted:
        _evicted.add(directory)
        evict(directory, current().cap, keep=keep)


# --- per-file summaries ------------------------------------------------------------------------------
#
# Beside an entry, ``<key>.sums``: the size and fingerprint of the prefix they were folded over and
# {name: state}, in the entry's framing.  A summary for another prefix than the entry's is ignored.

SUMS = ".sums"


def _frame(value: Any) -> bytes | None:
    import zlib  # (here, as in _unframe: a run that reads no entry, a warm search, does not import it)

    try:
        blob = marshal.dumps(value)
    except ValueError:
        return None
    return MAGIC + _stamp() + blob + len(blob).to_bytes(8, "little") + zlib.crc32(blob).to_bytes(4, "little")


def _unframe(data: bytes | bytearray) -> Any:
    import zlib

    head = MAGIC + _stamp()
    if not data.startswith(head) or len(data) < len(head) + 12:
        raise ValueError("not an entry of this version")
    blob = memoryview(data)[len(head):-12]
    if int.from_bytes(data[-12:-4], "little") != len(blob) or int.from_bytes(data[-4:], "little") != zlib.crc32(blob):
        raise ValueError("damaged")
    return marshal.loads(blob)


def _load_summaries(entry: str, size: int, print_: bytes) -> dict:
    try:
        with open(entry[:-len(SUFFIX)] + SUMS, "rb") as fh:
            got_size, got_print, sums = _unframe(fh.read())
        if got_size == size and got_print == print_ and type(sums) is dict:
            return sums
    except Exception:  # noqa: BLE001 - unreadable or damaged: no summaries, folded again
        pass
    return {}


def _store_summaries(note: Prefix) -> None:
    data = _frame((note.size, note.print_, note.summaries))
    if data is None:
        return
    try:
        if ready(os.path.dirname(note.entry)) and os.path.exists(note.entry):
            write_atomic(note.entry[:-len(SUFFIX)] + SUMS, data)
    except OSError:
        pass


# --- summaries of whole files ----------------------------------------------------------------------
#
# What a command that reads many files keeps of each (``ls --long``'s details, ``du``'s and
# ``stats``'s per-session figures): one bundle per directory and kind of summary,
# ``<key>.sum`` = {path as given: (device, inode, size, mtime_ns, fingerprint, marshal'd value)}.
# One file per directory rather than one per session: 10,000 sessions are one read, not 10,000.
# A summary is used only for the very file it was made of: same device, inode, size and mtime, and
# the same fingerprint (the index's check; the whole file up to 64 KiB).

BUNDLE = ".sum"
_bundles: dict = {}  # (directory, where, kind) -> [bundle path, {path: record}, dirty]


def summary(path: str, kind: str, compute: Callable[[], Any]) -> Any:
    """``compute()``, the summary of the file at ``path``: from the cache when it holds one of this
    ``kind`` for the file as it is now, else computed and kept (written by ``flush``).  ``kind``
    names everything besides the file's bytes that the value depends on (reader, pi version, ...)."""
    got = recall(path, kind)
    if got is not None:
        return got[0]
    value = compute()
    remember(path, kind, value)
    return value


_seen: dict = {}  # (path, kind) -> the stat of the file when it was looked up (``remember`` compares)
_made: list = []  # (bundle, path) of the summaries kept since the cache was last written: ``made_here``


def recall(path: str, kind: str) -> tuple[Any] | None:
    """``(value,)`` of the cached summary of ``path``, or ``None`` (then ``remember`` it)."""
    directory = _settings.directory
    if directory is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    _seen[(path, kind)] = st
    rec = _bundle(directory, path, kind)[1].get(path)
    if rec is None or rec[:4] != (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns):
        return None
    try:
        with open(path, "rb") as fh:
            if fingerprint(fh, st.st_size) != rec[4]:
                return None
        return (marshal.loads(rec[5]),)
    except (OSError, ValueError, EOFError, TypeError):
        return None


def remember(path: str, kind: str, value: Any) -> None:
    """Keep ``value`` as the summary of ``path`` when the file is still as ``recall`` found it."""
    st = _seen.pop((path, kind), None)
    if st is None or _settings.directory is None:
        return
    try:
        now = os.stat(path)
        if (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns) != (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns):
            return  # written to while it was read: the value may be of neither state
        with open(path, "rb") as fh:
            print_ = fingerprint(fh, st.st_size)
        blob = marshal.dumps(value)
    except (OSError, ValueError):
        return
    if not print_:
        return
    memo = _bundle_key(_settings.directory, path, kind)
    b = _bundle_at(*memo)
    b[1][path] = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, print_, blob)
    b[2] = True
    _made.append((memo, path))


def made_here() -> list:
    """The summaries this process kept since the cache was last written (``flush``), as plain
    values: what a forked child made, which its parent keeps (``keep_made``) and writes; they
    would otherwise end with the child, and each run would make them again."""
    return [(memo, path, _bundles[memo][1][path]) for memo, path in _made]  # (flush clears both)


def keep_made(made: list) -> None:
    """Keep what ``made_here`` gave in another process (a forked child of this one), for ``flush``."""
    for memo, path, record in made:
        if memo[0] == _settings.directory:
            b = _bundle_at(*memo)
            b[1][path] = record
            b[2] = True


def _bundle(directory: str, path: str, kind: str) -> list:
    return _bundle_at(*_bundle_key(directory, path, kind))


def _bundle_key(directory: str, path: str, kind: str) -> tuple:
    """``(directory, where, kind)``: the bundle the summaries of ``kind`` of ``path`` are kept in."""
    return directory, os.path.dirname(os.path.abspath(path)), kind


def _bundle_at(directory: str, where: str, kind: str) -> list:
    memo = (directory, where, kind)
    b = _bundles.get(memo)
    if b is None:
        key = f"{kind}\0{where}".encode("utf-8", "surrogateescape")
        target = os.path.join(directory, blake2b(key, digest_size=16).hexdigest() + BUNDLE)
        records: dict = {}
        try:
            with open(target, "rb") as fh:
                got = _unframe(fh.read())
            if type(got) is tuple and got[0] == (kind, where) and type(got[1]) is dict:
                records = got[1]
                os.utime(target)  # recently used
        except Exception:  # noqa: BLE001 - missing, unreadable or damaged: no summaries, made again
            pass
        b = _bundles[memo] = [target, records, False]
    return b


# --- values kept by the file's stat alone (ls: one stat per file) ------------------------------------------
#
# In a bundle of its own kind: {file name: (device, inode, size, mtime_ns, ctime_ns, seen_ns, value)}.
# A value is used for a file with the very same stat (ctime too: setting an mtime back changes
# it) whose mtime is well before the time the value was made (``RACY``): a write in the same
# clock tick as the read leaves the stat equal, so such a file is read again (as git treats a
# racily clean file).  No fingerprint: that would read the file, which is what this saves.

RACY = 2_000_000_000  # ns


def by_stat(paths: list[str], kind: str, compute: Callable[[list[str]], list],
            keep: Callable[[Any], bool] = lambda v: True) -> list:
    """``compute(paths)`` (one value per path, plain data), taken from the cache for each file whose
    stat is what it was when its value was kept; only the others are computed (and kept when
    ``keep(value)``; written by ``flush``)."""
    import time

    directory = _settings.directory
    if directory is None or not paths:
        return compute(paths)
    out: list = [None] * len(paths)
    todo: list[int] = []
    fresh: dict[int, tuple] = {}
    bundles: dict[str, list] = {}
    stat, split = os.stat, os.path.split
    last_dir, records = None, {}
    slash = os.sep == "/" and os.altsep is None
    by_fd = slash and os.stat in os.supports_dir_fd
    fd: int | None = None
    try:
        for i, p in enumerate(paths):
            d, _, name = p.rpartition("/")
            if not slash or not d or d[-1] == "/":
                d, name = split(p)  # (dirname and basename; the partition is the same for "dir/name")
            if d != last_dir:  # (a listing's paths come directory by directory)
                b = bundles.get(d)
                if b is None:
                    b = bundles[d] = _bundle_at(directory, os.path.abspath(d), kind)
                last_dir, records = d, b[1]
                if fd is not None:
                    os.close(fd)
                fd = open_dir(d) if by_fd and d else None
            try:
                # (from the directory's descriptor: the stat walks one name, not the whole path)
                st = stat(name, dir_fd=fd) if fd is not None and name not in ("", ".", "..") else stat(p)
            except OSError:
                todo.append(i)
                continue
            key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            rec = records.get(name)
            if type(rec) is tuple and len(rec) == 7 and rec[:5] == key and key[3] < rec[5] - RACY:
                out[i] = rec[6]
            else:
                todo.append(i)
                fresh[i] = (bundles[d], key)
    finally:
        if fd is not None:
            os.close(fd)
    if todo:
        now = time.time_ns()
        got = compute([paths[i] for i in todo])
        for i, v in zip(todo, got):
            out[i] = v
            if i in fresh and keep(v):
                b, key = fresh[i]
                b[1][os.path.basename(paths[i])] = (*key, now, v)
                b[2] = True
    return out


def open_dir(path: str) -> int | None:
    """A descriptor of the directory ``path`` to stat its files from (``os.stat(name, dir_fd=...)``:
    each stat walks one name, not the whole path), or ``None``."""
    try:
        return os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None


def flush() -> None:
    """Write the bundles that gained summaries and keep the directory under its cap (the CLI calls
    this after each command); forget what was loaded, so the next command reads the cache afresh."""
    bundles = list(_bundles.items())
    _bundles.clear()
    _seen.clear()
    _made.clear()
    written, _evicted_before = set(), set(_evicted)
    _evicted.clear()
    for (directory, where, kind), (target, records, dirty) in bundles:
        if not dirty:
            continue
        data = _frame(((kind, where), records))
        if data is None:
            continue
        try:
            if ready(directory):
                write_atomic(target, data)
                written.add(directory)
                evict(directory, current().cap, keep=target)
        except OSError:
            pass
    for directory in _evicted_before - written:  # entries written since the first one's eviction
        evict(directory, current().cap)


# --- a reader's state at the cached end (watch) ---------------------------------------------------
#
# ``<key>.state-<kind>`` beside the index entry: the file's identity, the size the state was read
# up to (a line end), that prefix's fingerprint, and the state as plain values.  Used where the
# file still starts with that prefix: the reader goes on from there, as after any append.


def resume(path: str, kind: str) -> tuple[int, Any] | None:
    """``(size, state)`` kept by ``keep`` for a prefix the file at ``path`` still starts with."""
    directory = _settings.directory
    if directory is None:
        return None
    try:
        st = os.stat(path)
        with open(_state_path(directory, path, st, kind), "rb") as fh:
            meta, state = _unframe(fh.read())
        cached_path, dev, ino, size, print_ = meta
        if (cached_path, dev, ino) != (os.path.abspath(path), st.st_dev, st.st_ino) or st.st_size < size:
            return None
        with open(path, "rb") as fh:
            if fingerprint(fh, size) != print_:
                return None
        return size, state
    except Exception:  # noqa: BLE001 - missing, unreadable, damaged or another file's: read from the start
        return None


def keep(path: str, kind: str, size: int, state: Any) -> None:
    """Keep ``state``, what a reader built from the first ``size`` bytes (a line end) of ``path``."""
    directory = _settings.directory
    if directory is None or size <= 0:
        return
    try:
        st = os.stat(path)
        with open(path, "rb") as fh:
            print_ = fingerprint(fh, size)
        data = _frame(((os.path.abspath(path), st.st_dev, st.st_ino, size, print_), state)) if print_ else None
        if data is not None and ready(directory):
            write_atomic(_state_path(directory, path, st, kind), data)
            _evict_once(directory, "")
    except OSError:
        pass


def _state_path(directory: str, path: str, st: os.stat_result, kind: str) -> str:
    return entry_path(directory, path, st)[:-len(SUFFIX)] + STATE + kind


STATE = ".state-"


def ready(directory: str) -> bool:
    """The directory exists, is ours and is 0700 (made so when missing)."""
    os.makedirs(directory, mode=0o700, exist_ok=True)
    st = os.stat(directory)
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return False  # someone else's directory: neither read into nor written
    if st.st_mode & 0o077:
        os.chmod(directory, 0o700)
    return True


def write_atomic(target: str, data: bytes) -> None:
    """``data`` as ``target`` (mode 0600), all or nothing: a temporary file renamed over it, so a
    reader (another pisess) sees the old entry or the new one, never a mix."""
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=SUFFIX, dir=os.path.dirname(target))
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), 0o600)
            out.write(data)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# --- what is there (``cache_status`` tells ``pisess cache``) --------------------------------------


def indexed_json(directory: str, indexed: int, failed: int) -> dict:
    """``pisess cache index --json``: ``indexed`` files brought up to date in the search index of
    ``directory``, ``failed`` that could not be read (a search scans them)."""
    return {"index": {"directory": directory, "indexedFileCount": indexed, "notIndexedFileCount": failed,
                      "bytes": search_index_size(directory)}}


def cleared_json(directory: str, removed: int, kept: list[tuple[str, str]] | None = None) -> dict:
    """``pisess cache clear --json``: ``clear(directory)`` removed ``removed`` entries, and could
    not remove ``kept`` (``(path, why)`` each)."""
    return {"cache": {"directory": directory, "removedEntryCount": removed,
                      "notRemoved": [{"path": p, "reason": why} for p, why in kept or []]}}


def files_of(directory: str) -> list[tuple[float, int, str]]:
    """``(mtime, size, path)`` of the entries and temporary files in ``directory``."""
    out = []
    try:
        with os.scandir(directory) as it:
            for d in it:
                if (d.name.endswith((SUFFIX, SUMS, BUNDLE)) or STATE in d.name or d.name.startswith(SEARCH_INDEX)) \
                        and d.is_file(follow_symlinks=False):
                    try:
                        st = d.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    out.append((st.st_mtime, st.st_size, d.path))
    except OSError:
        return []
    return out


def entries_of(directory: str) -> list[str]:
    """The entries in ``directory``, as ``pisess cache`` counts them and ``cache clear`` removes
    them: each file's compact index, summaries, bundles and states, and the search index (one
    entry with SQLite's files beside it); temporary files are none."""
    return [p for _, _, p in _grouped(files_of(directory)) if not os.path.basename(p).startswith(".tmp-")]


def search_index_size(directory: str) -> int:
    """Bytes of the search index (``SEARCH_INDEX`` and SQLite's files beside it) in ``directory``."""
    return sum(f[1] for f in files_of(directory) if os.path.basename(f[2]).startswith(SEARCH_INDEX))


def evict(directory: str, cap: int, keep: str | None = None, now: float | None = None) -> int:
    """Remove the least recently used entries until the directory holds at most ``cap`` bytes
    (``keep`` last of all), and temporary files older than an hour; how many were removed."""
    import time

    now = time.time() if now is None else now
    files = _grouped(files_of(directory))
    removed = 0
    live = []
    for mtime, size, p in files:
        if os.path.basename(p).startswith(".tmp-"):
            if now - mtime > STALE_TEMP:
                removed += _unlink(p)
            continue
        live.append((p == keep, mtime, size, p))
    total = sum(f[2] for f in live)
    for _, _, size, p in sorted(live):
        if total <= cap:
            break
        if _unlink(p):
            removed += 1
            total -= size
    return removed


def _grouped(files: list[tuple[float, int, str]]) -> list[tuple[float, int, str]]:
    """``files`` with the search index and SQLite's files beside it as one item (the index's
    mtime, their sizes added up): they are kept or removed together, never one without another."""
    index = [f for f in files if os.path.basename(f[2]).startswith(SEARCH_INDEX)]
    if not index:
        return files
    rest = [f for f in files if not os.path.basename(f[2]).startswith(SEARCH_INDEX)]
    main = [f for f in index if os.path.basename(f[2]) == SEARCH_INDEX]
    head = main[0] if main else index[0]
    return [*rest, (head[0], sum(f[1] for f in index), os.path.join(os.path.dirname(head[2]), SEARCH_INDEX))]


def clear(directory: str) -> tuple[int, list[tuple[str, str]]]:
    """Remove every entry (``entries_of``) and temporary file, the search index with them: how
    many entries were removed, and ``(path, why)`` of each file that could not be (a read-only
    directory, a full or read-only disk)."""
    removed = 0
    kept: list[tuple[str, str]] = []
    for _, _, p in _grouped(files_of(directory)):
        why = _remove(p)
        if why:
            kept.extend(why)
        elif not os.path.basename(p).startswith(".tmp-"):
            removed += 1
    return removed, kept


def _remove(p: str) -> list[tuple[str, str]]:
    """Remove ``p`` (the search index with SQLite's files beside it): ``(path, why)`` of each file
    that is still there."""
    kept = []
    for suffix in ("", "-wal", "-shm", ".damaged") if os.path.basename(p) == SEARCH_INDEX else ("",):
        try:  # (the database first: SQLite's files are nothing without it)
            os.unlink(p + suffix)
        except FileNotFoundError:
            pass
        except OSError as e:
            if os.path.lexists(p + suffix):
                kept.append((p + suffix, e.strerror or str(e)))
    return kept


def _unlink(p: str) -> int:
    return 0 if _remove(p) else 1
