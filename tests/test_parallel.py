"""``parallel.Child``: a forked child's value crosses a pipe pickled; whatever goes wrong on the
way makes the value ``None`` (the caller does that share itself), never half a value."""

import os
import sys

import pytest

from pisess.core import parallel

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or not sys.platform.startswith("linux"),
                                reason="forked children: Linux only (parallel.workers)")


def _pipe_bytes() -> int:
    """What a pipe holds before its writer waits (64 KiB on Linux unless raised)."""
    import fcntl

    read_end, write_end = os.pipe()
    try:
        return fcntl.fcntl(write_end, fcntl.F_GETPIPE_SZ)
    finally:
        os.close(read_end)
        os.close(write_end)


def _big() -> dict:
    """A value whose pickle is a few pipes' worth: rows of mixed objects and a blob.  Past a
    pipe's capacity the child's write waits on the parent's read, so any size beyond it shows
    that the parent reads while the child writes and reads to the end (200,000 rows, 10 MB,
    showed nothing more and cost a second of pickling)."""
    return {"rows": [[i, str(i) * 3, {"k": i}] for i in range(3_000)], "blob": b"x" * (96 << 10)}


def test_a_childs_value_bigger_than_a_pipe_arrives_whole():
    import pickle

    assert len(pickle.dumps(_big(), protocol=pickle.HIGHEST_PROTOCOL)) > 2 * _pipe_bytes()
    with parallel.Child(_big) as child:
        assert child.result() == _big()


def test_a_value_that_fails_to_pickle_half_way_is_none():
    """A few pipes' worth is pickled before the part that cannot be is met (written as pickled,
    it would be in the pipe already): no part of it is taken for a value."""
    def half_picklable() -> list:
        return [_big(), lambda: None]

    with parallel.Child(half_picklable) as child:
        assert child.result() is None


def test_a_child_that_raises_or_dies_gives_none():
    def raises() -> int:
        raise ValueError("no")

    def dies() -> int:
        os._exit(3)

    for fn in (raises, dies):
        with parallel.Child(fn) as child:
            assert child.result() is None


def _exited(pid: int, seconds: float = 20.0) -> bool:
    """Has child ``pid`` ended (left for its parent to reap: ``WNOWAIT``), within ``seconds``?"""
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None:
            return True
        time.sleep(0.01)
    return False


def test_a_child_ends_before_its_value_is_asked_for():
    """The value waits in a file, not in a pipe: a child whose value is more than a pipe holds has
    ended before the parent reads any of it (through a pipe, it would wait for that read), so the
    parent, busy with its own share meanwhile, finds the value made and written."""
    with parallel.Child(_big) as child:
        assert _exited(child.pid)
        assert child.result() == _big()


def test_without_memory_files_the_value_goes_through_a_temporary_file(monkeypatch):
    def refused(*args: object) -> int:
        raise OSError("no memfd here")

    monkeypatch.setattr(os, "memfd_create", refused, raising=False)
    with parallel.Child(_big) as child:
        assert _exited(child.pid)
        assert child.result() == _big()


def test_a_fork_refused_is_a_child_that_failed(monkeypatch):
    """A fork the system refuses (too many processes), or a pipe or the value's file (too many
    descriptors), is a child that failed: its value is ``None`` (the caller does that share
    itself), cancelling it does nothing, and no descriptor is left open."""
    def fds() -> set:
        return set(os.listdir("/proc/self/fd"))

    def refused(*args: object) -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    before = fds()
    for name in ("fork", "pipe", "memfd_create"):
        with monkeypatch.context() as m:
            m.setattr(os, name, refused)
            if name == "memfd_create":  # (and no temporary file either)
                m.setattr("tempfile.TemporaryFile", lambda *a, **k: refused())
            with parallel.Child(_big) as child:
                assert child.result() is None, name
            parallel.Child(_big).cancel()
            assert fds() == before, name
