"""pisess demo: the example sessions shipped in the package, shown with every view."""

from __future__ import annotations

from pisess.cli import common
from pisess.cli.common import handles_errors


@handles_errors
def demo(color: common.ColorOpt = "auto") -> None:
    """Copy the bundled example sessions to a temporary root and run ls, tree, context and validate on them.

    Example: pisess demo
    """
    from pisess.cli import render

    render.demo(color=color)
