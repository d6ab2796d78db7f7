"""The page's side work (``export_explorer``'s ``beside``): what it asks of the owners of the rules
is what they answer when asked in full."""

from __future__ import annotations

from test_explorer_page import _every_session


def test_the_pages_placements_are_searchs_placements_of_every_entry():
    """``page.placements`` asks ``place`` for no branches (the page finds its own): per entry, the
    place of ``place(session).where``, for both readers, on every shipped and fixture session."""
    from pisess.core.analyses.page import placements
    from pisess.core.errors import PisessError
    from pisess.core.model.placement import WHERE, place
    from pisess.core.reading.session import open_session

    checked = edited = 0
    for path in _every_session():
        for reader in ("cli", "harness"):
            try:
                s = open_session(str(path), reader, light=True)
            except PisessError:
                continue
            whole = place(s).where
            assert placements(s) == [WHERE.index(w) for w in whole], path
            checked += len(whole)
            edited += whole.count("edited")
    assert checked > 1000 and edited  # (context edits among them: the place the last step marks)
