"""``parallel.Child``: a forked child's value crosses a pipe pickled; whatever goes wrong on the
way makes the value ``None`` (the caller does that share itself), never half a value."""

import os
import sys

import pytest

from pisess.core import parallel

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or not sys.platform.startswith("linux"),
                                reason="forked children: Linux only (parallel.workers)")


def _big() -> dict:
    return {"rows": [[i, str(i) * 3, {"k": i}] for i in range(200_000)], "blob": b"x" * (3 << 20)}


def test_a_childs_value_bigger_than_a_pipe_arrives_whole():
    with parallel.Child(_big) as child:
        assert child.result() == _big()


def test_a_value_that_fails_to_pickle_half_way_is_none():
    """Megabytes are pickled before the part that cannot be is met: no part of it is taken for
    a value."""
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
