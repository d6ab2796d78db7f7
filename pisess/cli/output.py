"""The one printer.  Every command hands it what a view returned; nothing else writes to stdout.

A view returns a list of items: Rich renderables (``Text``, ``Table``, ``Rule``, ``Panel``), or
plain ``str`` lines (already escaped: GitHub annotations, allowlist lines), which are written as
they are without loading Rich.  The printer decides the width (the one views are laid out for),
pages long output on a terminal, prints in chunks, and turns a failed write into a ``storage``
error.  Views never print and never touch files.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from pisess.core.errors import PisessError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from rich.console import Console

CHUNK = 1000  # rows per print: per-print set-up (size, options, buffer flush) cost as much as the rows
ENDS_AT_ONCE = [False]  # the process ends with os._exit once its output is flushed (app.main, console)
_outliving: list = []  # (outlive)


def outlive(value: object) -> None:
    """Keep ``value`` until the process ends, where it ends at once after its output is flushed
    (``ENDS_AT_ONCE``: ``app.console``): a command's working values are then never freed one by
    one (the 200 MB session's page export: a million objects, 46 ms).  In a run that returns
    (tests, a caller in this process) nothing is kept."""
    if ENDS_AT_ONCE[0]:
        _outliving.append(value)


def check_color(color: str) -> str:
    """``--color`` checked (a usage error unless auto, always or never), in lower case."""
    color = (color or "auto").lower()
    if color not in ("auto", "always", "never"):
        raise PisessError("usage", f"--color must be auto, always or never, not {color!r}")
    return color


# --- console ---------------------------------------------------------------------------------


PIPE_WIDTH = 200
RULE_WIDTH = 80  # rules and boxes in a pipe or a file (Printer.rule_width)


def columns() -> int | None:
    """``COLUMNS`` when it is a width, else ``None``."""
    cols = os.environ.get("COLUMNS", "")
    return int(cols) if cols.isdigit() and int(cols) > 0 else None


def isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _dumb_term() -> bool:
    return os.environ.get("TERM", "").lower() in ("dumb", "unknown")


def make_console(color: str = "auto", stderr: bool = False) -> Console:
    """Colour decided at call time: --color, then NO_COLOR, then whether the stream is a terminal."""
    from rich.console import Console

    color = check_color(color)
    no_color = color == "never" or (color == "auto" and bool(os.environ.get("NO_COLOR")))
    width = columns()
    stream = sys.stderr if stderr else sys.stdout
    if width is None and not isatty(stream):
        width = PIPE_WIDTH  # a pipe or a file: lay rows out wide, as git log and rg do, not at 80
    return Console(
        file=sys.stderr if stderr else sys.stdout,
        force_terminal=True if color == "always" else None,
        no_color=no_color,
        # --color always means colour even where TERM=dumb (Rich would find no colour system there)
        color_system=None if no_color else "standard" if color == "always" and _dumb_term() else "auto",
        markup=False, emoji=False, highlight=False, width=width, soft_wrap=False,
    )


# --- the printer -----------------------------------------------------------------------------


def soft(text: Any) -> Any:
    """Mark a ``Text`` to be printed unwrapped and uncut, as one long line the terminal may fold
    (a finding, a path): the printer prints it with ``soft_wrap``."""
    text.no_wrap = True
    text.overflow = "ignore"
    return text


def _is_soft(r: Any) -> bool:
    return getattr(r, "overflow", None) == "ignore" and getattr(r, "no_wrap", False) is True


class _Trimmed:
    """``renderable`` drawn without spaces at the end of its lines: Rich's word wrap keeps the
    space it broke a line at, a padded cell its padding.  No view ends a row in spaces (a pipe,
    ``grep ' $'``, a diff of two runs would see them); one place for all of them."""

    def __init__(self, renderable: Any) -> None:
        self.renderable = renderable

    def __rich_console__(self, console, options):
        from rich.segment import Segment

        new_line = Segment.line()
        for line in console.render_lines(self.renderable, options, pad=False, new_lines=False):
            end = len(line)
            while end and not line[end - 1].control and not line[end - 1].text.rstrip(" "):
                end -= 1
            if end and not line[end - 1].control and line[end - 1].text.endswith(" "):
                last = line[end - 1]
                yield from line[:end - 1]
                yield Segment(last.text.rstrip(" "), last.style)
            else:
                yield from line[:end]
            yield new_line


def _trimmed(r: Any) -> Any:
    """``r`` without spaces ending its lines: a one-line row that does not wrap loses them in
    place (a 100,000-row tree in colour costs no second layout), anything else is ``_Trimmed``."""
    if type(r).__name__ == "Text" and r.no_wrap and "\n" not in r.plain:
        r.rstrip()
        return r
    return _Trimmed(r)


class _WholeText:
    """A text stream (stdout, stderr) whose every write reaches the file whole or raises: its
    ``TextIOWrapper`` hands the encoded bytes to the binary layer and ignores the count that
    returns, so a disk that fills up cut the output short with exit 0.  The rest (``isatty``,
    ``fileno``, ``encoding``) is the stream's own."""

    def __init__(self, stream: Any) -> None:
        stream.flush()  # (nothing of it may come after what is written here)
        self._stream = stream
        self._buffer = stream.buffer
        self._encoding = getattr(stream, "encoding", None) or "utf-8"
        self._errors = getattr(stream, "errors", None) or "strict"

    def write(self, text: str) -> int:
        from pisess.core.reading.files import write_all

        write_all(self._buffer, text.encode(self._encoding, self._errors))
        return len(text)

    def flush(self) -> None:
        self._buffer.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def whole(stream: Any) -> Any:
    """``stream`` with whole writes (``_WholeText``), when it has a binary layer to write them to."""
    return _WholeText(stream) if getattr(stream, "buffer", None) is not None else stream


def _abandon(stream: Any) -> None:
    """After a write failed: what the stream still holds goes to ``/dev/null``, so the
    interpreter's last flush at exit does not fail a second time (``Exception ignored ...``,
    exit 120 instead of the error's own code)."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(fd, stream.fileno())
        finally:
            os.close(fd)
    except (OSError, ValueError, AttributeError):  # (io.UnsupportedOperation is both)
        pass


class Printer:
    """Prints views to stdout (or, with ``stderr``, talk to stderr) with colour decided once."""

    def __init__(self, color: str = "auto", *, stderr: bool = False) -> None:
        self.color = color
        self.stderr = stderr
        self._console: Console | None = None
        self._stream: Any = None

    @property
    def stream(self):
        if self._stream is None:
            self._stream = whole(sys.stderr if self.stderr else sys.stdout)
        return self._stream

    @property
    def console(self) -> Console:
        if self._console is None:
            console = make_console(self.color, stderr=self.stderr)
            console.file = self.stream
            self._console = console
        return self._console

    @property
    def width(self) -> int:
        """The width views are laid out for (``COLUMNS``, else the terminal's, else 80)."""
        return self.console.width

    @property
    def rule_width(self) -> int:
        """The width of rules and boxes: the layout width on a terminal or with ``COLUMNS``, else
        (a pipe, a file) ``RULE_WIDTH``: rows are laid out wide there (``PIPE_WIDTH``), but a rule
        as wide would fold onto three lines in ``less`` or an editor at 80 columns."""
        width = self.width
        if self.console.is_terminal or columns() is not None:
            return width
        return min(width, RULE_WIDTH)

    def _narrow(self, r: Any) -> Any:
        """A rule or a box at ``rule_width``; anything else as it is."""
        if type(r).__name__ in ("Rule", "Panel"):
            width = self.rule_width
            if width < self.width:
                from rich.constrain import Constrain

                return Constrain(r, width)
        return r

    def rendered(self, r: Any) -> str:
        """``r`` as the printer writes it, for an item that writes its own lines (``print_lines``,
        ``pisess.cli.views.lines``) and hands Rich what it cannot lay out itself."""
        console = self.console
        with console.capture() as cap:
            console.print(_trimmed(self._narrow(r)))
        return cap.get()

    def style_codes(self, style: str) -> tuple[str, str]:
        """What the console writes before and after a piece of text in ``style`` (nothing without
        colour): Rich's own codes, taken from a probe."""
        from rich.text import Text

        console = self.console
        with console.capture() as cap:
            console.print(Text("x", style=style), end="")
        before, _, after = cap.get().partition("x")
        return before, after

    def show(self, items: Iterable[Any], *, pager: bool = False) -> None:
        items = list(items)
        try:
            if pager and self._page(items):
                return
            self._print(items)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise self._failed(e) from None

    def _failed(self, e: OSError) -> Exception:
        _abandon(sys.stderr if self.stderr else sys.stdout)
        return PisessError("storage", f"cannot write to {'stderr' if self.stderr else 'stdout'}: {e.strerror or e}")

    def _print(self, items: list) -> None:
        run: list = []

        def flush() -> None:
            if run:
                from rich.console import Group

                # A Group keeps each row's no_wrap: print(a, b) joins its arguments into a new
                # Text that wraps, so an over-long tree row used to spill onto a line of its own.
                narrow = self._narrow
                for at in range(0, len(run), CHUNK):
                    self.console.print(Group(*(_trimmed(narrow(r)) for r in run[at:at + CHUNK])))
                run.clear()

        # Without colour (a pipe, a file, NO_COLOR) a one-line row that does not wrap is its
        # plain text cut to the width: written directly, it costs a string join instead of
        # Rich's rendering of every segment (10,000 ls rows, a 100,000-entry tree).
        plain: bool | None = None  # decided at the first renderable: str lines need no Rich
        width = 0
        lines: list[str] = []  # plain lines not yet written (written CHUNK at a time)

        def write_lines() -> None:
            if lines:
                self.stream.write("".join(lines))
                lines.clear()

        for r in items:
            if plain is None and not isinstance(r, str):
                # (not on a terminal: a live status line, watch's, is drawn by the console)
                plain = self.console.color_system is None and not self.console.is_terminal
                width = self.width
            if plain and type(r).__name__ == "Text" and r.no_wrap and "\n" not in r.plain:
                flush()
                if r.cell_len > width:
                    r = r.copy()
                    r.truncate(width, overflow=r.overflow or "ellipsis")
                lines.append(r.plain.rstrip(" ") + "\n")
            elif isinstance(r, str):
                flush()
                lines.append(r + "\n")
            elif hasattr(r, "print_lines"):  # laid out by itself, line by line (views.lines.Lines)
                flush()
                for line in r.print_lines(self):
                    lines.append(line)
                    if len(lines) >= CHUNK:
                        write_lines()
                continue
            elif _is_soft(r):
                write_lines()
                flush()
                self.console.print(r, soft_wrap=True)
                continue
            else:
                write_lines()
                run.append(r)
                continue
            if len(lines) >= CHUNK:
                write_lines()
        write_lines()
        flush()
        self.stream.flush()

    def _page(self, items: list) -> bool:
        console = self.console
        if not (console.is_terminal and sys.stdin.isatty()):
            return False
        from rich.console import Group
        from rich.text import Text

        parts: list[str] = []
        run: list = []
        for r in [*items, None]:
            if r is not None and not hasattr(r, "print_lines"):
                run.append(r)
                continue
            if run:
                with console.capture() as cap:
                    console.print(Group(*[_trimmed(Text(x) if isinstance(x, str) else x) for x in run]))
                parts.append(cap.get())
                run.clear()
            if r is not None:
                parts.extend(r.print_lines(self))
        out = "".join(parts)
        if out.count("\n") <= console.size.height or not _run_pager(out, getattr(console.file, "encoding", None)):
            console.file.write(out)
        return True

    def data(self, data: bytes | Iterable[Any]) -> None:
        """Bytes as they are (JSON documents, an export) to the stream; pieces are written as they
        come (a document whose images are copied from the session file one at a time: a piece
        that is not bytes is a ``Span`` of a file, ``images.Span``)."""
        stream = sys.stderr if self.stderr else sys.stdout
        pieces: Iterable[Any] = (data,) if isinstance(data, bytes) else data
        try:
            out = getattr(stream, "buffer", None)
            if out is not None:
                stream.flush()
                from pisess.core.reading.files import write_all

                for piece in pieces:
                    if type(piece) is bytes:
                        write_all(out, piece)
                    else:  # a Span of a file (an image's base64): copied by the kernel
                        out.flush()
                        try:
                            fd = out.fileno()
                        except (AttributeError, ValueError, OSError):  # (io.UnsupportedOperation: no descriptor)
                            fd = None
                        if fd is None:
                            for chunk in piece.chunks():
                                write_all(out, chunk)
                        else:
                            piece.send(fd)
                out.flush()
            else:  # CliRunner without a buffer
                stream.write(b"".join(p if type(p) is bytes else b"".join(p.chunks()) for p in pieces)
                             .decode("utf-8", "replace"))
        except BrokenPipeError:
            raise
        except OSError as e:
            raise self._failed(e) from None


def _run_pager(text: str, encoding: str | None) -> bool:
    """Pipe ``text`` to ``$PAGER`` (else ``less`` when there is one).  ``False`` when no pager could
    be started, so the caller prints instead, as git does: a ``PAGER`` that does not exist must not
    swallow the output (the shell says "not found" and exits 127; ``pydoc``, under Rich's pager,
    ignores that)."""
    import shlex
    import shutil
    import subprocess

    cmd = os.environ.get("PAGER")
    if cmd is None:
        cmd = "less" if shutil.which("less") else ""
    cmd = cmd.strip()
    if not cmd or cmd == "cat":
        return False
    try:
        first = shlex.split(cmd)[0]
    except (ValueError, IndexError):
        first = ""
    if first and "=" not in first and shutil.which(first) is None:
        return False  # not found: nothing would be shown
    env = dict(os.environ)
    env.setdefault("LESS", "-FRX")
    try:
        proc = subprocess.Popen(cmd, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:
        return False
    try:
        assert proc.stdin is not None
        proc.stdin.write(text.encode(encoding or "utf-8", "replace"))
        proc.stdin.close()
    except OSError:  # the reader quit the pager early (a broken pipe)
        pass
    while True:
        try:
            code = proc.wait()
            break
        except KeyboardInterrupt:  # the pager handles ^C itself; wait for it as pydoc does
            continue
    return code not in (126, 127)  # the shell could not run it: nothing was shown


def show(items: Iterable[Any], color: str = "auto", *, pager: bool = False) -> None:
    """``Printer(color).show(items)``."""
    Printer(color).show(items, pager=pager)


def talk(items: Iterable[Any], color: str = "auto") -> None:
    """Views of what a command did (export's summary, fork's message) on stderr."""
    Printer(color, stderr=True).show(items)
