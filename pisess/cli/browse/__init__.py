"""``pisess browse``: the interactive inspector (Textual, the optional extra ``pisess[tui]``)."""
