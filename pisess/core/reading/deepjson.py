"""A JSON reader without recursion, for the rare line nested deeper than orjson and ``json`` go.

``JSON.parse`` has no practical depth limit, so a 100,000-deep array is a valid entry for pi.
orjson stops at 1,024 levels and Python's ``json`` at the recursion limit; this loop does not.
Strings go through ``json``'s own ``scanstring`` (escapes and lone surrogates as JS reads them).
"""

from __future__ import annotations

import re
from json.decoder import scanstring  # type: ignore[attr-defined]  # public since 2.6, not in typeshed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}


def _ws_end(s: str, i: int) -> int:
    """Where the whitespace at ``i`` ends (``_WS`` matches the empty string, so it always matches)."""
    return _WS.match(s, i).end()  # type: ignore[union-attr]


def _key(s: str, i: int) -> tuple[str, int]:
    """An object key and its colon at ``i``; returns the key and where its value starts."""
    if i >= len(s) or s[i] != '"':
        raise ValueError("expected a key")
    key, i = scanstring(s, i + 1, True)
    i = _ws_end(s, i)
    if i >= len(s) or s[i] != ":":
        raise ValueError("expected ':'")
    return key, _ws_end(s, i + 1)


def loads(s: str) -> Any:
    """Parse ``s``; raises ``ValueError`` where ``JSON.parse`` throws."""
    i = _ws_end(s, 0)
    stack: list = []  # containers being filled: [container, pending key or None]
    value: Any = None
    while True:
        if i >= len(s):
            raise ValueError("unexpected end")
        c = s[i]
        if c == "{" or c == "[":
            container: Any = {} if c == "{" else []
            i = _ws_end(s, i + 1)
            if i < len(s) and s[i] == ("}" if c == "{" else "]"):
                value, i = container, i + 1
            else:
                stack.append([container, None])
                if c == "{":
                    stack[-1][1], i = _key(s, i)
                continue
        elif c == '"':
            value, i = scanstring(s, i + 1, True)
        else:
            m = _NUMBER.match(s, i)
            if m:
                text = m.group()
                value = float(text) if any(ch in text for ch in ".eE") or len(text) > 300 else int(text)
                i = m.end()
            else:
                for word, lit in _LITERALS.items():
                    if s.startswith(word, i):
                        value, i = lit, i + len(word)
                        break
                else:
                    raise ValueError(f"unexpected character at {i}")
        # a complete value: attach it to its container, close containers that end here
        while True:
            i = _ws_end(s, i)
            if not stack:
                if i != len(s):
                    raise ValueError("extra data")
                return value
            top = stack[-1]
            if isinstance(top[0], dict):
                top[0][top[1]] = value
            else:
                top[0].append(value)
            if i < len(s) and s[i] == ",":
                i = _ws_end(s, i + 1)
                if isinstance(top[0], dict):
                    top[1], i = _key(s, i)
                break
            closer = "}" if isinstance(top[0], dict) else "]"
            if i < len(s) and s[i] == closer:
                value = stack.pop()[0]
                i += 1
                continue
            raise ValueError(f"expected ',' or '{closer}' at {i}")


def js_numbers(v: Any) -> Any:
    """Copy of ``v`` with integers beyond 2**53 as doubles and NaN/Infinity as null; no recursion."""
    def fix(x: Any) -> Any:
        if isinstance(x, bool):
            return x
        if isinstance(x, int):
            return float(x) if abs(x) > 2**53 else x
        if isinstance(x, float):
            return x if x == x and x not in (float("inf"), float("-inf")) else None
        return x

    if not isinstance(v, (dict, list)):
        return fix(v)
    root: Any = {} if isinstance(v, dict) else []
    stack: list[tuple[Any, Any]] = [(v, root)]
    while stack:
        src, dst = stack.pop()
        items = src.items() if isinstance(src, dict) else enumerate(src)
        for k, x in items:
            if isinstance(x, (dict, list)):
                child: Any = {} if isinstance(x, dict) else []
                stack.append((x, child))
                x = child
            else:
                x = fix(x)
            if isinstance(dst, dict):
                dst[k] = x
            else:
                dst.append(x)
    return root
