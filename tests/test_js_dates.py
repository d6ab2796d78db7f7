"""Short paths the explorer page's export takes per entry answer as the general rules do:
``js.parse_date`` of ``toISOString``'s form, ``one_line`` of a long text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pisess.core.js import _parse_date_general, parse_date
from pisess.core.model.text import one_line, visible


@given(st.integers(0, 9999), st.integers(0, 14), st.integers(0, 33), st.integers(0, 25), st.integers(0, 61),
       st.integers(0, 61), st.integers(0, 999))
def test_the_canonical_form_reads_as_the_general_rule_reads_it(y, mo, d, h, mi, s, ms):
    stamp = f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}.{ms:03d}Z"
    got, want = parse_date(stamp), _parse_date_general(stamp)
    assert got == want and type(got) is type(want)


def test_near_forms_take_the_general_rule():
    assert parse_date("2025-03-03T24:00:00.000Z") == _parse_date_general("2025-03-03T24:00:00.000Z") is not None
    assert parse_date("2025-02-31T00:00:00.000Z") == parse_date("2025-03-03T00:00:00.000Z")
    assert parse_date("2025-03-03T09:00:00.000+01:00") == parse_date("2025-03-03T08:00:00.000Z")
    assert parse_date("2025-13-03T09:00:00.000Z") is None


def _one_line_whole(s: str, width: int) -> str:
    """``one_line`` as it was written before its short path: the whole text folded, then cut."""
    s = visible(" ".join(s.split()))
    if width > 0 and len(s) > width:
        return s[: max(1, width - 1)] + "\u2026"
    return s


@given(st.text(alphabet=st.sampled_from(list("ab \t\r\n\u200d\u2028\x1b\x85\u3000\ud800é😀")), max_size=400),
       st.integers(0, 30))
def test_one_line_of_a_long_text_is_the_whole_texts_line_cut(s, width):
    assert one_line(s, width) == _one_line_whole(s, width)


def test_one_line_of_long_whitespace_or_controls():
    for s in (" " * 500 + "x", "\x1b" * 500, "\u200d" * 300 + " a", "a" + " " * 300 + "b" * 10):
        for width in (1, 2, 10, 64):
            assert one_line(s, width) == _one_line_whole(s, width)
