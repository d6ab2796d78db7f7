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
    """A forked process computing ``fn(*args)``; ``result()`` is its value or ``None``."""

    def __init__(self, fn: Callable[..., Any], *args: Any) -> None:
        read_end, write_end = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns, never runs the parent's cleanup or flushes its buffers
            code = 1
            try:
                os.close(read_end)
                import pickle

                # pickled whole before it is written: a pipe holds 64 kB, and a value written as it
                # is pickled would wait there for the parent's read, its pickling then on the path
                # the parent waits on (a page's half: 0.1 s) instead of done while the parent works
                data = pickle.dumps(fn(*args), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_end, "wb") as out:
                    out.write(data)
                code = 0
            finally:
                os._exit(code)
        os.close(write_end)
        self._input = os.fdopen(read_end, "rb")
        self._done = False

    def result(self) -> Any:
        """The child's value, read as it arrives (no second copy of the whole message), or
        ``None`` when it failed."""
        import pickle

        value = None
        try:
            value = pickle.load(self._input)
        except Exception:  # noqa: BLE001 - a child that died mid-message: the caller does the work
            pass
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
