"""``js.parse_date``'s short path for ``toISOString``'s form answers as its general rule does."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from pisess.core.js import _parse_date_general, parse_date


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
