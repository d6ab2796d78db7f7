"""JavaScript semantics pi relies on, reproduced exactly.

pi is TypeScript: it tests values for truthiness, trims with JS ``trim()``, compares with ``===``,
stringifies with template literals and parses dates with ``new Date(s).getTime()``.  Python differs
on each of these in small ways that change answers on real files, so they live here, once.
"""

from __future__ import annotations

import functools
import math
import re
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class _Undefined:
    """JavaScript's ``undefined``: a key that is absent, as opposed to present with ``null``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "undefined"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "UNDEF"  # (pickled by name: a value sent from a forked child is still ``is UNDEF``)


UNDEF: Any = _Undefined()


class JSArray(list):
    """A JSON array that migration gave properties (pi sets ``id``/``parentId`` on array lines)."""

    __slots__ = ("props",)

    def __init__(self, items=()):
        super().__init__(items)
        self.props: dict = {}


# JS String.prototype.trim() strips exactly these (ECMAScript WhiteSpace + LineTerminator).
JS_WHITESPACE = ("\t\n\x0b\x0c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                 "\u2028\u2029\u202f\u205f\u3000\ufeff")


def js_trim(s: str) -> str:
    return s.strip(JS_WHITESPACE)


def js_blank(s: str) -> bool:
    """``!line.trim()``"""
    return not s.strip(JS_WHITESPACE)


def get(obj: Any, key: str) -> Any:
    """``obj[key]`` as JS evaluates it; raises ``TypeError`` on null/undefined like JS does."""
    if isinstance(obj, dict):
        return obj.get(key, UNDEF)
    if obj is None or obj is UNDEF:
        raise TypeError(f"Cannot read properties of {'null' if obj is None else 'undefined'} (reading '{key}')")
    if isinstance(obj, JSArray):
        return obj.props.get(key, UNDEF)
    if isinstance(obj, (list, str)) and key == "length":
        return len(obj)
    return UNDEF


def get_json(obj: Any, key: str) -> Any:
    """``get`` as JSON says it: ``undefined`` (a key the object does not have) is ``null``."""
    v = get(obj, key)
    return None if v is UNDEF else v


def truthy(v: Any) -> bool:
    """JS truthiness: ``[]`` and ``{}`` are true, ``0``, ``""``, ``NaN``, null, undefined are false."""
    if v is None or v is UNDEF or v is False:
        return False
    if v is True:
        return True
    if isinstance(v, (int, float)):
        return v == v and v != 0
    if isinstance(v, str):
        return v != ""
    return True


def strict_eq(a: Any, b: Any) -> bool:
    """``a === b``"""
    if a is UNDEF or b is UNDEF:
        return a is b
    if a is None or b is None:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return a is b


def key(v: Any) -> Any:
    """A dict key with JS ``Map`` identity: 1 and true and "1" differ; objects compare by identity."""
    if isinstance(v, str) or v is None or v is UNDEF:
        return v
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, (int, float)):
        return ("num", float(v))
    return ("obj", id(v))


def to_number(v: Any) -> float:
    """``Number(v)`` (ToNumber after ToPrimitive)."""
    if v is None:
        return 0.0
    if v is UNDEF:
        return math.nan
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, (list, dict)):
        return to_number(to_string(v))
    s = js_trim(str(v))
    if s == "":
        return 0.0
    try:
        if re.fullmatch(r"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|Infinity)", s):
            return float(s.replace("Infinity", "inf"))
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", s):
            return float(int(s, 16))
        if re.fullmatch(r"0[oO][0-7]+", s):
            return float(int(s[2:], 8))
        if re.fullmatch(r"0[bB][01]+", s):
            return float(int(s[2:], 2))
    except ValueError:
        pass
    return math.nan


def compare(a: Any, b: Any, op: str) -> bool:
    """``a < b`` / ``a >= b`` with JS abstract relational comparison."""
    pa = to_string(a) if isinstance(a, (list, dict)) else a
    pb = to_string(b) if isinstance(b, (list, dict)) else b
    x: Any
    y: Any
    if isinstance(pa, str) and isinstance(pb, str):
        x, y = pa, pb
    else:
        x, y = to_number(pa), to_number(pb)
        if x != x or y != y:
            return False
    return {"<": x < y, ">=": x >= y, "<=": x <= y, ">": x > y}[op]


def number_to_string(v: float | int) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        v = float(v) if abs(v) > 2**53 else v
        if isinstance(v, int):
            return str(v)
    if v != v:
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == int(v) and abs(v) < 1e21:
        if abs(v) < 2**53:
            return str(int(v))
        # JS writes the shortest digits that round-trip, then zeros: 12345678901234567000
        mant, exp = repr(v).split("e") if "e" in repr(v) else (repr(v), "0")
        sign = "-" if mant.startswith("-") else ""
        head, _, tail = mant.lstrip("-").partition(".")
        digits = (head + tail.rstrip("0")) if tail.strip("0") else head
        return sign + digits + "0" * (int(exp) - (len(digits) - len(head)))
    r = repr(v)
    if "e" in r:
        mant, exp = r.split("e")
        sign = "-" if exp.startswith("-") else "+"
        return f"{mant}e{sign}{exp.lstrip('+-').lstrip('0') or '0'}"
    return r


def to_string(v: Any) -> str:
    """``String(v)`` / a template literal's conversion."""
    if isinstance(v, str):
        return v
    if v is None:
        return "null"
    if v is UNDEF:
        return "undefined"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return number_to_string(v)
    if isinstance(v, list):
        return ",".join("" if x is None or x is UNDEF else to_string(x) for x in v)
    return "[object Object]"


def spread(v: Any) -> list:
    """``[...v]``: arrays copy, strings split into code points, anything else throws."""
    if isinstance(v, list):
        return list(v)
    if isinstance(v, str):
        return list(v)
    raise TypeError(f"{to_string(v) if v is not None and v is not UNDEF else repr(v)} is not iterable")


# --- dates -------------------------------------------------------------------------------------

_ISO = re.compile(
    r"([+-]\d{6}|\d{4})(?:-(\d\d)(?:-(\d\d))?)?"
    r"(?:T(\d\d):(\d\d)(?::(\d\d)(?:\.(\d+))?)?(Z|[+-]\d\d:\d\d)?)?"
)
_MAX_TIME = 8.64e15


def _days_from_civil(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _local_offset_ms(utc_ms: float) -> float:
    try:
        t = time.localtime(utc_ms / 1000)
        return t.tm_gmtoff * 1000.0
    except (OverflowError, OSError, ValueError):
        return -time.timezone * 1000.0


# ``toISOString``'s own form, what pi writes in every entry: read by position (an export parses a
# timestamp per entry, twice; the general pattern's groups cost three times as much)
_CANONICAL = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")


_HOURS: dict = {}  # "YYYY-MM-DDTHH:" of the canonical form -> its hour's time (a session's entries share few)


def _in_known_hour(s: str) -> int | None:
    """The time of ``s`` in ``toISOString``'s form when its hour was read before (``_HOURS``).
    (By the hour, not the minute: the 200 MB session's 57,909 stamps lie in 18,460 minutes and
    377 hours, and each minute read whole cost a pattern match and five numbers.)"""
    hour_ms = _HOURS.get(s[:14])
    if hour_ms is not None and len(s) == 24 and s[16] == ":" and s[19] == "." and s[23] == "Z":
        digits = s[14:16] + s[17:19] + s[20:23]  # minute, second, millisecond
        if digits.isdigit() and digits.isascii() and digits[:2] < "60" and digits[2:4] < "60":  # (ASCII, in range)
            return hour_ms + int(digits[:2]) * 60000 + int(digits[2:])
    return None


def parse_date(s: str) -> float | None:
    """``Date.parse(s)`` for the ECMAScript date-time format (V8's rules); ``None`` for NaN."""
    if len(s) == 24:
        known = _in_known_hour(s)
        if known is not None:
            return float(known)
        if _CANONICAL.match(s):
            month, day, hour, minute, sec = int(s[5:7]), int(s[8:10]), int(s[11:13]), int(s[14:16]), int(s[17:19])
            if 1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and sec < 60:
                days = _days_from_civil(int(s[:4]), month, 1) + day - 1
                hour_ms = days * 86400000 + hour * 3600000
                if len(_HOURS) >= 1 << 14:
                    _HOURS.clear()
                _HOURS[s[:14]] = hour_ms
                return float(hour_ms + minute * 60000 + sec * 1000 + int(s[20:23]))
    return _parse_date_general(s)


def _parse_date_general(s: str) -> float | None:
    m = _ISO.fullmatch(s)
    if not m:
        return None
    ys, mo, da, hh, mi, ss, frac, tz = m.groups()
    if ys == "-000000":
        return None
    year = int(ys)
    month = int(mo) if mo else 1
    day = int(da) if da else 1
    if not 1 <= month <= 12 or not 1 <= day <= 31:
        return None
    hour = int(hh) if hh else 0
    minute = int(mi) if mi else 0
    sec = int(ss) if ss else 0
    ms = int((frac or "0")[:3].ljust(3, "0"))
    if hour > 24 or minute > 59 or sec > 59 or (hour == 24 and (minute or sec or ms)):
        return None
    days = _days_from_civil(year, month, 1) + day - 1
    t = float(days * 86400000 + hour * 3600000 + minute * 60000 + sec * 1000 + ms)
    if tz == "Z" or (hh is None):
        pass  # date-only forms are UTC
    elif tz:
        sign = 1 if tz[0] == "+" else -1
        t -= sign * (int(tz[1:3]) * 3600000 + int(tz[4:6]) * 60000)
    else:
        t -= _local_offset_ms(t)  # a date-time without an offset is local time
    if abs(t) > _MAX_TIME:
        return None
    return t


def date_ms(v: Any) -> float | int | None:
    """``new Date(v).getTime()``; ``None`` stands for NaN (JSON ``null``)."""
    t: float | None
    if type(v) is str:  # (pi's every timestamp)
        known = _in_known_hour(v)
        if known is not None:
            return known  # (a whole number of milliseconds, as below)
        t = parse_date(v)
        if t is None:
            return None
    elif isinstance(v, bool):
        t = 1.0 if v else 0.0
    elif v is None:
        t = 0.0
    elif v is UNDEF or isinstance(v, dict):
        return None
    elif isinstance(v, (int, float)):
        t = float(v)
        if t != t or abs(t) > _MAX_TIME:
            return None
        t = float(math.trunc(t))
    else:
        t = parse_date(to_string(v))
        if t is None:
            return None
    return int(t) if t == int(t) else t


def iso_utc(ms: float) -> str:
    """``new Date(ms).toISOString()``"""
    secs, rem = divmod(int(ms), 1000)
    days, secs = divmod(secs, 86400)
    hours, secs = divmod(secs, 3600)
    minutes, secs = divmod(secs, 60)
    return "%s%02d:%02d:%02d.%03dZ" % (_iso_day(days), hours, minutes, secs, rem)  # noqa: UP031 - (faster than an f-string here)


@functools.lru_cache(maxsize=4096)
def _iso_day(days: int) -> str:
    """``YYYY-MM-DDT`` of a day since the epoch (a listing's thousands of times fall on a few days:
    the calendar is worked out once for each)."""
    return time.strftime("%Y-%m-%dT", time.gmtime(days * 86400))


def now_iso(clock=time.time) -> str:
    return iso_utc(clock() * 1000)


__all__ = [
    "UNDEF", "JSArray", "js_trim", "js_blank", "get", "truthy", "strict_eq", "key", "to_number",
    "compare", "to_string", "spread", "parse_date", "date_ms", "iso_utc",
]
