"""The one error family of pisess.

Every failure the core reports is a ``PisessError`` carrying a stable ``code`` (the spec's
vocabulary: ``invalid_session``, ``invalid_entry``, ``not_found``, ``invalid_fork_target``,
``storage``, plus pisess's own ``cycle``, ``invalid_value``, ``usage``), the file, the line and the
byte offset where it applies.  The CLI turns it into ``path:line: code: message`` and an exit code.
"""

from __future__ import annotations


class PisessError(Exception):
    """A failure with a stable code, located in a file when it can be."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        physical_line: int | None = None,
        offset: int | None = None,
        reason: str | None = None,
        stage: str | None = None,
        unreadable: bool = False,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path
        self.line = line
        self.physical_line = physical_line if physical_line is not None else line
        self.offset = offset
        # pi's message without its "Invalid JSONL session file <path>: " prefix
        self.reason = reason if reason is not None else message
        self.stage = stage
        # the input could not be read at all (a named file or directory missing): exit 2 whatever
        # the code, which stays pi's word for it (``not_found``)
        self.unreadable = unreadable or code == "storage"
        # the reader that refused the file, where one did ("harness": pi's SDK; the pi command's
        # lenient reader may still read it)
        self.refused_by: str | None = None

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "message": self.message,
            "reason": self.reason,
            "line": self.line,
            "physicalLine": self.physical_line,
            "offset": self.offset,
            **({"stage": self.stage} if self.stage else {}),
            **({"path": self.path} if self.path else {}),
        }

    def located(self) -> str:
        """``path:line: code: message`` (path and line when known)."""
        where = ""
        if self.path:
            where = self.path + (f":{self.physical_line}" if self.physical_line else "") + ": "
        # the reason, not pi's message, which would repeat the path
        return f"{where}{self.code}: {self.reason}"


class JSError(PisessError):
    """Where pi itself would crash with a JavaScript TypeError/Error on this input."""

    def __init__(self, message: str, **kw) -> None:
        super().__init__("invalid_value", message, **kw)
