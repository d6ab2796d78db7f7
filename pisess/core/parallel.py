"""Work split over forked processes, for reads where the kernel's time (open, read) or orjson's
dominates and one CPU is the limit: a big file read in two parts, thousands of headers listed.

A child runs one function on its share and sends the result back pickled; the parent does its
own share meanwhile.  Anything that goes wrong in a child (it dies, sends half a message, raises)
makes its result ``None``: callers then do that share themselves, so a failure costs time, never
an answer.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class Settings:
    """What the caller lets reads do with the machine; the CLI decides (``PISESS_JOBS``, see
    ``from_environ``), the library never looks.

    ``jobs``: how many processes a read may share its work among.  ``1``, the library's default,
    never forks; ``None`` lets each read use up to what this process may run on."""

    jobs: int | None = 1


_settings = Settings()


def configure(settings: Settings) -> Settings:
    """Use ``settings`` from now on (the CLI calls this once); the previous ones are returned."""
    global _settings
    previous, _settings = _settings, settings
    return previous


def current() -> Settings:
    return _settings


def from_environ(environ: Mapping[str, str]) -> Settings:
    """The CLI's settings: ``PISESS_JOBS`` processes when it is a number (``1`` turns forking
    off), else as many as the CPUs allow."""
    env = environ.get("PISESS_JOBS", "").strip()
    return Settings(jobs=max(1, int(env)) if env.isdigit() else None)


def workers(limit: int = 2) -> int:
    """How many processes may share a read: the configured ``jobs``; with ``None``, up to
    ``limit`` on Linux with more than one CPU, from a process running one thread."""
    jobs = _settings.jobs
    if jobs is not None:
        return max(1, jobs)
    if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
        return 1  # macOS system libraries are not fork-safe (Python's own pools spawn there)
    import threading

    if threading.active_count() != 1:
        return 1  # forking a process that runs threads can deadlock the child
    return max(1, min(limit, cpus()))


def cpus() -> int:
    """The CPUs this process may run on (a container's share, not the machine's)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


class Child:
    """A forked process computing ``fn(*args)``; ``result()`` is its value or ``None``.

    The value is pickled into an anonymous file made before the fork (``_value_file``) and only
    its length crosses the pipe: a pipe holds 64 kB, so a value written there waited for the
    parent's read, and the parent, done with its own share, then spent its time passing 64 kB at a
    time between the two processes (the 200 MB session's half: 25-43 ms on the path the page waits
    on).  Written to the file, the value is there when the parent asks; it is read in place."""

    def __init__(self, fn: Callable[..., Any], *args: Any) -> None:
        # What the system refuses (a descriptor, a process: too many) makes a child that failed,
        # its share the caller's, with nothing left open.
        self.pid, self._done = -1, True
        made: list = []
        try:
            self._file = _value_file()
            made.append(self._file.close)
            read_end, write_end = os.pipe()
            made += [lambda: os.close(read_end), lambda: os.close(write_end)]
            self.pid = os.fork()
        except OSError:
            for close in made:
                close()
            return
        if self.pid == 0:  # the child: never returns, never runs the parent's cleanup or flushes its buffers
            code = 1
            try:
                os.close(read_end)
                import pickle

                self._file.write(pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL))
                self._file.flush()
                os.write(write_end, self._file.tell().to_bytes(8, "little"))  # (last: the value is whole)
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        self._input = os.fdopen(read_end, "rb")
        self._done = False

    def result(self) -> Any:
        """The child's value, or ``None`` when it failed."""
        if self._done:
            return None
        value = None
        try:
            got = self._input.read(8)
            if len(got) == 8:
                value = _load(self._file.fileno(), int.from_bytes(got, "little"))
        except Exception:  # noqa: BLE001 - a child that died mid-value: the caller does the work
            value = None
        finally:
            status = self._finish(kill=value is None)
        return value if status == 0 else None

    def cancel(self) -> None:
        """Not needed after all: stop it without waiting for its work."""
        self._finish(kill=True)

    def _finish(self, *, kill: bool) -> int:
        if self._done:
            return -1
        self._done = True
        self._input.close()
        self._file.close()
        if kill:
            import signal

            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        _, status = os.waitpid(self.pid, 0)
        return status

    def __enter__(self) -> Child:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.cancel()  # a no-op once result() was read


def _value_file() -> Any:
    """An anonymous file in memory for a child's value (``memfd_create``; else a temporary file)."""
    if hasattr(os, "memfd_create"):
        try:
            return os.fdopen(os.memfd_create("pisess-child", os.MFD_CLOEXEC), "r+b")
        except OSError:
            pass
    import tempfile

    return tempfile.TemporaryFile()


def _load(fd: int, n: int) -> Any:
    """The value pickled in the first ``n`` bytes of the file ``fd``, read in place (mapped: no
    copy of the bytes beside the objects made of them)."""
    import mmap
    import pickle

    with mmap.mmap(fd, n, access=mmap.ACCESS_READ) as mapped:
        return pickle.loads(mapped)
