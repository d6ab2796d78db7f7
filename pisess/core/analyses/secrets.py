"""Credentials in session files: a small, tested rule table run over decoded JSON strings.

Sessions hold whatever tool output held (config files, ``env`` dumps, API responses), so every
entry of every branch is scanned, the header's ``cwd`` included.  Each line is decoded as JSON
first, because a secret inside a JSON string may be escaped (``\\u002d``, ``\\n`` in a PEM block);
the decoded string values are what the rules see (a line that is not JSON is scanned as text).

Rules, most specific first; a later rule never reports a span an earlier one already claimed:

* provider tokens with a fixed prefix: Anthropic, OpenAI, GitHub, GitLab, Slack (tokens and
  webhook URLs), Stripe, Google API keys and OAuth client secrets, AWS access key ids;
* private key blocks (``-----BEGIN … PRIVATE KEY-----``, with or without their END line), JWTs
  whose header decodes to a JSON object;
* AWS secret access keys next to their key name;
* ``scheme://user:password@host`` URLs;
* ``.env``-style ``KEY=value`` (or ``KEY: value``) where the upper-case key names a secret;
* high-entropy values assigned to a key that names a secret (``api_key = "…"``,
  ``"accessToken": "…"``, ``Authorization: Bearer …``), and JSON object members whose key names a
  secret.

A finding carries a masked preview (``sk-ant-…Q9xA``) and a fingerprint
``sha256(kind + secret)``: the secret itself never leaves this module.  Pure code: no I/O except
``scan_file``, which streams a file line by line, ``scan_paths`` (the files a ``secrets`` run
reads) and ``read_allowlist``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import orjson

from ..errors import PisessError
from ..reading.files import open_file, os_error

KINDS = (
    "anthropic_api_key", "openai_api_key", "google_api_key", "google_oauth_client_secret", "aws_access_key_id",
    "aws_secret_access_key", "github_token", "gitlab_token", "slack_token", "slack_webhook", "stripe_key",
    "private_key", "jwt", "basic_auth_url", "env_secret", "high_entropy_assignment",
)
ELLIPSIS = "\u2026"
ALLOWLIST_NAME = ".pisess-secrets-allow"

# A token ends where the token alphabet ends (so a key inside a longer base64 blob never fires).
_B = r"(?<![A-Za-z0-9_-])"
_E = r"(?![A-Za-z0-9_-])"

# Values that stand in for a secret in docs, templates and CI files.
_PLACEHOLDER_WORDS = ("example", "placeholder", "changeme", "change_me", "change-me", "redacted", "dummy",
                      "your_", "your-", "yourkey", "xxxx", "****", "....", "<", ">", "${", "{{", "%(", "todo",
                      "insert", "replace", "fixme", "sample")
_PLACEHOLDER_VALUES = {"secret", "password", "passwd", "pass", "token", "test", "testing", "null", "none", "nil",
                       "undefined", "true", "false", "empty", "string", "value", "x-oauth-basic", "apikey",
                       "api_key", "api-key", "private", "hidden", "masked", "unset", "default", "required",
                       "optional", "admin", "user", "username"}

# Words (after splitting a key name) that make it name a secret; and the last words that do not.
_SECRET_WORDS = {"secret", "password", "passwd", "passphrase", "pwd", "token", "apikey", "credential",
                 "credentials", "privatekey", "secretkey", "accesskey", "authkey", "passcode"}
_KEY_QUALIFIERS = {"api", "access", "private", "secret", "signing", "encryption", "master", "client", "app",
                   "service", "account", "license", "webhook", "auth", "session", "admin", "deploy", "hmac",
                   "jwt", "shared", "consumer", "subscription"}
_NOT_SECRET_TAIL = {"url", "uri", "urls", "endpoint", "host", "hostname", "file", "files", "path", "dir", "name",
                    "names", "id", "ids", "type", "types", "length", "len", "size", "min", "max", "limit", "count",
                    "expiry", "expires", "expiration", "ttl", "timeout", "header", "prefix", "suffix", "env", "var",
                    "enabled", "enable", "disabled", "required", "location", "hint", "policy", "format", "mode",
                    "field", "algorithm", "alg", "version", "hash", "rotation", "provider", "kind", "label",
                    "region", "scope", "scopes", "usage", "budget", "source", "command", "cmd", "store", "manager",
                    "helper", "index", "arn", "ref", "reference", "method", "strategy", "option", "options",
                    "validation", "validator", "regex", "pattern", "rules"}

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_DOTTED_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_ENV_REF = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def key_words(key: str) -> list[str]:
    """``AWS_SECRET_ACCESS_KEY`` / ``apiKey`` / ``x-api-key`` → lower-case words."""
    out: list[str] = []
    for part in re.split(r"[^A-Za-z0-9]+", key):
        out.extend(w.lower() for w in _CAMEL.findall(part))
    return out


@lru_cache(maxsize=4096)
def names_secret(key: str) -> bool:
    """Does this key name (``DB_PASSWORD``, ``accessToken``, ``api_key``) name a credential?
    (Kept for the few thousand names last asked: a session's keys are a few dozen names, asked
    of each of its strings, 100,000 in a session of 15,000 messages.)"""
    words = key_words(key)
    if not words or words[-1] in _NOT_SECRET_TAIL:
        return False
    if words == ["pwd"] or words == ["oldpwd"]:  # the shell's working directory
        return False
    if any(w in _SECRET_WORDS for w in words):
        return True
    for i, w in enumerate(words):
        if w == "key" and i > 0 and words[i - 1] in _KEY_QUALIFIERS:
            return True
        if w == "auth" and i == len(words) - 1 and i > 0 and words[i - 1] in ("basic", "http", "proxy"):
            return True
    return False


def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    if not s:
        return 0.0
    counts: dict = {}
    for c in s:
        counts[c] = counts.get(c, 0) + 1
    n = len(s)
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def is_placeholder(value: str) -> bool:
    v = value.strip().strip("\"'").lower()
    if not v or v in _PLACEHOLDER_VALUES:
        return True
    if v.endswith(("...", "\u2026")):
        return True  # documentation: "OPENAI_API_KEY=sk-..." stands for a key, it is not one
    if v.rstrip(".*x\u2026<>") in _known_prefixes():
        return True  # a rule's prefix alone ("sk-ant-", "gsk_") names the kind of key, not a key
    if any(w in v for w in _PLACEHOLDER_WORDS):
        return True
    if v.startswith("$") or v.startswith("%") or (v.startswith("[") and v.endswith("]")):
        return True
    return len(set(v)) <= 2  # "aaaaaaaa", "x-x-x-x", "00000000"


def _known_prefixes() -> frozenset:
    global _PREFIXES
    if _PREFIXES is None:
        _PREFIXES = frozenset(t.lower() for rule in RULES for t in rule.triggers if len(t) >= 3)
    return _PREFIXES


_PREFIXES: frozenset | None = None


def looks_random(value: str) -> bool:
    """A machine-made secret rather than a word, a path, a hash-like id or a reference."""
    v = value
    if len(v) < 16 or len(v) > 1024 or is_placeholder(v) or _UUID.fullmatch(v) or _DOTTED_NAME.fullmatch(v):
        return False
    if v.startswith(("/", "./", "../", "~/")) or re.search(r"\.[a-z]{1,5}$", v):
        return False  # a path or a file name
    if _HEX.fullmatch(v):
        return len(v) >= 32 and entropy(v) >= 3.0
    classes = sum(1 for pat in (r"[a-z]", r"[A-Z]", r"[0-9]") if re.search(pat, v))
    if classes < 2 or not re.search(r"[0-9]", v) and classes < 3:
        return False
    return entropy(v) >= (3.5 if len(v) >= 24 else 3.2)


def plausible_env_value(value: str, quoted: bool) -> bool:
    v = value.strip()
    if len(v) < 6 or is_placeholder(v) or v.isdigit():
        return False
    if v.startswith(("/", "./", "../", "~/")) or _ENV_REF.fullmatch(v) or _DOTTED_NAME.fullmatch(v):
        return False
    if not quoted and re.search(r"[(){}\[\]$%<>`\\]", v):
        return False  # code, a substitution or a template, not a value
    return True


def fingerprint(kind: str, secret: str) -> str:
    """``sha256(kind + secret)``, hex: what ``.pisess-secrets-allow`` lists."""
    return hashlib.sha256((kind + secret).encode("utf-8", "surrogatepass")).hexdigest()


def masked(label: str, secret: str) -> str:
    """``label…Q9xA``: the last four characters only when the secret is long enough (20+) that
    they give nothing away, else its length."""
    if len(secret) >= 20:
        return f"{label}{ELLIPSIS}{secret[-4:]}"
    return f"{label}{ELLIPSIS}({len(secret)} chars)"


def _short(s: str, n: int = 40) -> str:
    return s if len(s) <= n else s[: n - 1] + ELLIPSIS


@dataclass(frozen=True)
class Match:
    """One secret in one string: the span of the secret itself (what ``--redact`` replaces)."""

    kind: str
    start: int
    end: int
    secret: str
    preview: str

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.kind, self.secret)


@dataclass(frozen=True)
class Rule:
    """``pattern`` runs only when one of ``triggers`` occurs in the text (lower-cased first when
    ``lower``): a substring test is far cheaper than a regex that cannot start from a literal."""

    kind: str
    triggers: tuple
    pattern: re.Pattern
    check: Callable[[re.Match], bool] | None = None
    preview: Callable[[re.Match], str] | None = None
    group: str = "s"
    lower: bool = False


def _token_preview(m: re.Match) -> str:
    return masked(m.group("p"), m.group("s"))


def _has_digit_and_case(s: str) -> bool:
    return bool(re.search(r"[0-9]", s) and re.search(r"[a-z]", s) and re.search(r"[A-Z]", s))


def _openai_ok(m: re.Match) -> bool:
    s = m.group("s")
    return "T3BlbkFJ" in s or (len(s) >= 40 and _has_digit_and_case(s))


def _jwt_ok(m: re.Match) -> bool:
    head = m.group("s").split(".", 1)[0]
    try:
        v = orjson.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    except (ValueError, binascii.Error, orjson.JSONDecodeError):
        return False
    return isinstance(v, dict) and ("alg" in v or "typ" in v)


def _pem_ok(m: re.Match) -> bool:
    body = m.group("s")[len(m.group("p")):]
    body = body.replace("\\n", "").replace("\\r", "")
    return len(re.findall(r"[A-Za-z0-9+/]", body)) >= 64


def _pem_preview(m: re.Match) -> str:
    return f"{m.group('p')}{ELLIPSIS}({len(m.group('s')):,} chars)"


def _aws_id_ok(m: re.Match) -> bool:
    return "EXAMPLE" not in m.group("s")


def _aws_secret_ok(m: re.Match) -> bool:
    s = m.group("s")
    return "EXAMPLE" not in s and sum(1 for p in (r"[a-z]", r"[A-Z]", r"[0-9]") if re.search(p, s)) >= 2


def _basic_ok(m: re.Match) -> bool:
    pw = m.group("s")
    return not is_placeholder(pw) and not (pw.startswith("$") or pw.startswith("{"))


def _basic_preview(m: re.Match) -> str:
    return f"{m.group('scheme')}://{_short(m.group('u'), 24)}:{ELLIPSIS}@{_short(m.group('h'), 40)}"


def _env_value(m: re.Match) -> tuple[str, int, int, bool]:
    for g, quoted in (("s1", True), ("s2", True), ("s3", False)):
        if m.group(g) is not None:
            return m.group(g), m.start(g), m.end(g), quoted
    return "", m.end(), m.end(), False


def _env_ok(m: re.Match) -> bool:
    value, _, _, quoted = _env_value(m)
    return names_secret(m.group("k")) and plausible_env_value(value, quoted)


def _env_preview(m: re.Match) -> str:
    return masked(_short(m.group("k")) + "=", _env_value(m)[0])


def _assign_ok(m: re.Match) -> bool:
    return names_secret(m.group("k")) and looks_random(m.group("s"))


def _bearer_ok(m: re.Match) -> bool:
    return looks_random(m.group("s"))


def _bearer_preview(m: re.Match) -> str:
    return masked("Bearer ", m.group("s"))


def _keyed_secret_preview(m: re.Match) -> str:
    return masked(_short(m.group("k")) + "=", m.group("s"))


# a key name that names a secret holds one of these (lower-cased)
SECRET_TRIGGERS = ("key", "secret", "token", "pass", "pwd", "credential", "auth")
_PEM_HEAD = r"(?P<p>-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)"

_GH = ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")
_AWS_IDS = ("AKIA", "ASIA", "ABIA", "ACCA")

RULES: tuple[Rule, ...] = (
    Rule("private_key", ("PRIVATE KEY",),
         re.compile(r"(?P<s>" + _PEM_HEAD + r"[\s\S]{0,20000}?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)"),
         _pem_ok, _pem_preview),
    Rule("private_key", ("PRIVATE KEY",),  # cut off before its END line
         re.compile(r"(?P<s>" + _PEM_HEAD + r"(?:[A-Za-z0-9+/=\t\r\n ]|\\[nr])*[A-Za-z0-9+/=])"),
         _pem_ok, _pem_preview),
    Rule("jwt", ("eyJ",),
         re.compile(r"(?<![A-Za-z0-9_.-])(?P<s>(?P<p>eyJ)[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{10,})"
                    + _E), _jwt_ok, _token_preview),
    Rule("anthropic_api_key", ("sk-ant-",),
         re.compile(_B + r"(?P<s>(?P<p>sk-ant-)(?:[a-z]{2,8}\d{2}-)?[A-Za-z0-9_-]{32,})" + _E), None, _token_preview),
    Rule("openai_api_key", ("sk-",),
         re.compile(_B + r"(?P<s>(?P<p>sk-(?:proj-|svcacct-|admin-)?)(?!ant-)[A-Za-z0-9_-]{32,})" + _E),
         _openai_ok, _token_preview),
    Rule("github_token", _GH, re.compile(_B + r"(?P<s>(?P<p>gh[pousr]_)[A-Za-z0-9]{36,255})" + _E), None,
         _token_preview),
    Rule("github_token", ("github_pat_",), re.compile(_B + r"(?P<s>(?P<p>github_pat_)[A-Za-z0-9_]{60,255})" + _E),
         None, _token_preview),
    Rule("gitlab_token", ("gl",),
         re.compile(_B + r"(?P<s>(?P<p>gl(?:pat|ptt|dt|rt|cbt|soat|ffct|imt|oas)-)[A-Za-z0-9_-]{20,})" + _E),
         None, _token_preview),
    Rule("slack_webhook", ("hooks.slack.com",),
         re.compile(r"(?P<s>(?P<p>https://hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_/+-]{20,})"),
         None, _token_preview),
    Rule("slack_token", ("xox",), re.compile(_B + r"(?P<s>(?P<p>xox[abposre]-)[0-9]+-[0-9A-Za-z-]{8,})" + _E),
         None, _token_preview),
    Rule("slack_token", ("xapp-",), re.compile(_B + r"(?P<s>(?P<p>xapp-)[0-9]-[A-Za-z0-9-]{20,})" + _E),
         None, _token_preview),
    Rule("stripe_key", ("_live_", "_test_"),
         re.compile(_B + r"(?P<s>(?P<p>(?:sk|rk)_(?:live|test)_)[0-9A-Za-z]{16,})" + _E), None, _token_preview),
    Rule("stripe_key", ("whsec_",), re.compile(_B + r"(?P<s>(?P<p>whsec_)[A-Za-z0-9+/]{24,}=*)" + _E),
         None, _token_preview),
    Rule("google_api_key", ("AIza",), re.compile(_B + r"(?P<s>(?P<p>AIza)[0-9A-Za-z_-]{35})" + _E),
         None, _token_preview),
    Rule("google_oauth_client_secret", ("GOCSPX-",), re.compile(_B + r"(?P<s>(?P<p>GOCSPX-)[A-Za-z0-9_-]{28})" + _E),
         None, _token_preview),
    Rule("aws_access_key_id", _AWS_IDS,
         re.compile(r"(?<![A-Za-z0-9])(?P<s>(?P<p>AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})(?![A-Za-z0-9])"),
         _aws_id_ok, _token_preview),
    Rule("aws_secret_access_key", ("secret",),
         re.compile(r"(?P<k>(?i:aws[_-]?secret[_-]?access[_-]?key|secret[_-]?access[_-]?key|aws[_-]?secret[_-]?key))"
                    r"[\"']?\s*(?:=>|:=|[:=])\s*[\"']?(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"),
         _aws_secret_ok, _keyed_secret_preview, lower=True),
    Rule("basic_auth_url", ("://",),
         re.compile(r"\b(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{1,20})://(?P<u>[^\s:@/?#\"'<>\\]{0,256}):"
                    r"(?P<s>[^\s@/?#\"'<>\\]{1,256})@(?P<h>[^\s/?#\"'<>\\@]{1,256})"),
         _basic_ok, _basic_preview),
    Rule("env_secret", SECRET_TRIGGERS,
         re.compile(r"(?m)(?:^|(?<=[\s;&|(\"']))(?:export[ \t]+|set[ \t]+)?(?P<k>[A-Z][A-Z0-9_]*[A-Z0-9])"
                    r"[ \t]*[=:][ \t]*(?:\"(?P<s1>[^\"\n]*)\"|'(?P<s2>[^'\n]*)'|(?P<s3>[^\s\"'#;&|]+))"),
         _env_ok, _env_preview, group="", lower=True),
    Rule("high_entropy_assignment", SECRET_TRIGGERS,
         re.compile(r"(?<![A-Za-z0-9_.-])(?P<k>[A-Za-z_][A-Za-z0-9_.-]{0,80})[\"']?[ \t]*(?:=>|:=|[:=])[ \t]*"
                    r"[\"']?(?P<s>[A-Za-z0-9+/_.~-]{16,1024}=*)(?![A-Za-z0-9+/_.~=-])"),
         _assign_ok, _keyed_secret_preview, lower=True),
    Rule("high_entropy_assignment", ("bearer",),
         re.compile(r"(?i:\bbearer)[ \t]+(?P<s>[A-Za-z0-9._~+/-]{16,1024}=*)(?![A-Za-z0-9._~+/=-])"),
         _bearer_ok, _bearer_preview, lower=True),
)


def _span(rule: Rule, m: re.Match) -> tuple[str, int, int]:
    if rule.kind == "env_secret":
        value, start, end, _ = _env_value(m)
        return value, start, end
    return m.group(rule.group), m.start(rule.group), m.end(rule.group)


def _overlaps(spans: list, start: int, end: int) -> bool:
    return any(start < e and s < end for s, e in spans)


def _any_of(triggers: set) -> re.Pattern:
    return re.compile("|".join(re.escape(t) for t in sorted(triggers, key=len, reverse=True)) or "(?!)")


# Every rule's triggers in one pattern (as the text is, and lower-cased): a string holding none of
# them, most of a session's, is passed over with one search instead of a look for each rule's
_TRIGGERS = _any_of({t for rule in RULES if not rule.lower for t in rule.triggers})
_TRIGGERS_LOW = _any_of({t for rule in RULES if rule.lower for t in rule.triggers})


def find_secrets(text: str, key: str | None = None) -> list[Match]:
    """Every secret in ``text``, non-overlapping, in order.  ``key``, when the string is the value of
    a JSON object member, adds the member itself as assignment context."""
    found: list[Match] = []
    spans: list = []
    if len(text) >= 8 and (_TRIGGERS.search(text) is not None or _TRIGGERS_LOW.search(text.lower()) is not None):
        low = None
        for rule in RULES:
            if rule.lower:
                if low is None:
                    low = text.lower()
                hay = low
            else:
                hay = text
            if not any(t in hay for t in rule.triggers):
                continue
            for m in rule.pattern.finditer(text):
                if rule.check is not None and not rule.check(m):
                    continue
                secret, start, end = _span(rule, m)
                if not secret or _overlaps(spans, start, end):
                    continue
                preview = rule.preview(m) if rule.preview else masked("", secret)
                found.append(Match(rule.kind, start, end, secret, preview))
                spans.append((start, end))
    if key is not None and not found:
        pair = member_secret(key, text)
        if pair is not None:
            found.append(pair)
    found.sort(key=lambda x: x.start)
    return found


_AWS_SECRET_KEY = re.compile(r"(?i)(?:aws[_-]?)?secret[_-]?access[_-]?key")


@lru_cache(maxsize=4096)
def _names_aws_secret(key: str) -> bool:
    return _AWS_SECRET_KEY.fullmatch(key) is not None


def member_secret(key: str, value: str) -> Match | None:
    """A JSON member ``"<key>": "<value>"`` whose key names a secret and whose value is one."""
    aws = _names_aws_secret(key)
    if not aws and not names_secret(key):
        return None  # (most members: what follows asks nothing else of a key that names no secret)
    v = value.strip()
    if not v or "\n" in v:
        return None
    k = _short(key)
    if aws and re.fullmatch(r"[A-Za-z0-9/+]{40}", v) and "EXAMPLE" not in v:
        return Match("aws_secret_access_key", 0, len(value), value, masked(k + "=", value))
    if not names_secret(key):
        return None
    if re.fullmatch(r"[A-Z][A-Z0-9_]*[A-Z0-9]", key) and plausible_env_value(v, True):
        return Match("env_secret", 0, len(value), value, masked(k + "=", value))
    if looks_random(v):
        return Match("high_entropy_assignment", 0, len(value), value, masked(k + "=", value))
    return None


def redact_text(text: str, matches: list[Match]) -> str:
    """Each secret replaced with ``[REDACTED:kind]``."""
    out, pos = [], 0
    for m in sorted(matches, key=lambda x: x.start):
        out.append(text[pos:m.start])
        out.append(f"[REDACTED:{m.kind}]")
        pos = m.end
    out.append(text[pos:])
    return "".join(out)


def _is_image(v: dict) -> bool:
    return v.get("type") == "image"


def _walk(value: Any, key: str | None = None, skip: frozenset = frozenset()) -> Iterator[tuple[tuple, str | None, str]]:
    """``(steps, member key, string)`` for every string in ``value``, without recursion (sessions
    can nest thousands of levels).  Image data is skipped, and so are top-level members in ``skip``.
    The way down is kept as links to the way to the parent, made a tuple only for a string: a
    tuple a level would copy the whole way at every level (5,000 levels: 12.5 million steps)."""
    stack: list = [(value, None, key)]
    while stack:
        v, way, k = stack.pop()
        if isinstance(v, str):
            yield _steps_of(way), k, v
        elif isinstance(v, dict):
            image = _is_image(v)
            stack.extend(reversed([(x, (way, name), name) for name, x in v.items()
                                   if not (image and name == "data") and not (way is None and name in skip)]))
        elif isinstance(v, list):
            stack.extend(reversed([(x, (way, i), None) for i, x in enumerate(v)]))


def _steps_of(way: Any) -> tuple:
    """The steps of a way ``_walk`` keeps (``(way to the parent, step)``, None at the top), as a tuple."""
    steps = []
    while way is not None:
        way, step = way
        steps.append(step)
    return tuple(reversed(steps))


def field_path(steps: tuple) -> str:
    """``("message", "content", 0, "text")`` → ``message.content[0].text``."""
    out = ""
    for st in steps:
        out += f"[{st}]" if isinstance(st, int) else (f".{st}" if out else str(st))
    return out


def walk_strings(value: Any) -> Iterator[tuple[str, str | None, str]]:
    """``(field path, member key, string)`` for every string value (image data skipped)."""
    for steps, k, s in _walk(value):
        yield field_path(steps), k, s


def redact(value: Any, key: str | None = None, skip: frozenset = frozenset()) -> tuple[Any, list[Match]]:
    """A copy of ``value`` with every secret in its strings replaced by ``[REDACTED:kind]``, and the
    matches.  Only the containers on the way to a changed string are copied; ``value`` is left
    alone.  ``skip`` names top-level members not scanned (ids, timestamps)."""
    found: list[Match] = []
    hits: list = []
    for steps, k, s in _walk(value, key, skip):
        ms = find_secrets(s, k)
        if ms:
            found.extend(ms)
            hits.append((steps, redact_text(s, ms)))
    if not hits:
        return value, found
    if hits[0][0] == ():
        return hits[0][1], found
    root = dict(value) if isinstance(value, dict) else list(value)
    copied: dict = {}  # step -> (the copy there, what is copied below it): by level, not by whole prefixes
    for steps, text in hits:
        node, below = root, copied
        for step in steps[:-1]:
            got = below.get(step)
            if got is None:
                original = node[step]
                child = dict(original) if isinstance(original, dict) else list(original)
                node[step] = child
                got = below[step] = (child, {})
            node, below = got
        node[steps[-1]] = text
    return root, found


# --- files ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SecretFinding:
    """One secret in a session file.  ``preview`` is masked; the secret is not kept."""

    path: str
    line: int
    entry_id: str | None
    type: str | None
    role: str | None
    field: str
    kind: str
    preview: str
    fingerprint: str

    def to_json(self, allowlisted: bool = False) -> dict:
        return {"path": self.path, "line": self.line, "entryId": self.entry_id, "type": self.type, "role": self.role,
                "field": self.field, "kind": self.kind, "preview": self.preview, "fingerprint": self.fingerprint,
                "allowlisted": allowlisted}


def _line_findings(path: str, number: int, raw: bytes) -> list[SecretFinding]:
    from ..reading.jsonl import NOT_JSON, parse_json

    value = parse_json(raw) if raw.strip() else NOT_JSON
    if value is NOT_JSON:
        # a line cut off mid-JSON: its text, and the text with JSON escapes undone
        text = raw.decode("utf-8", "replace")
        out: list[SecretFinding] = []
        seen: set = set()
        for t in (text, _unescape(text)) if "\\" in text else (text,):
            for m in find_secrets(t):
                if m.fingerprint not in seen:
                    seen.add(m.fingerprint)
                    out.append(SecretFinding(path, number, None, None, None, "(line text)", m.kind, m.preview,
                                             m.fingerprint))
        return out
    entry_id = type_ = role = None
    if isinstance(value, dict):
        tv = value.get("type")
        type_ = tv if isinstance(tv, str) else None
        eid = value.get("id")
        entry_id = eid if isinstance(eid, str) and type_ != "session" else None
        msg = value.get("message")
        if isinstance(msg, dict) and isinstance(msg.get("role"), str):
            role = msg["role"]
    out = []
    seen = set()
    try:
        for field, key, s in walk_strings(value):
            for m in find_secrets(s, key):
                fp = m.fingerprint
                if fp in seen:
                    continue
                seen.add(fp)
                out.append(SecretFinding(path, number, entry_id, type_, role, field or "(value)", m.kind, m.preview,
                                         fp))
    except RecursionError:
        raise PisessError("invalid_value", f"{path}:{number}: a value nests too deeply to scan", path=path,
                          line=number) from None
    return out


_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", '"': '"', "/": "/", "\\": "\\"}


def _unescape(text: str) -> str:
    """JSON string escapes undone in text that is not (complete) JSON."""
    def one(m: re.Match) -> str:
        e = m.group(1)
        return chr(int(e[1:], 16)) if e[0] == "u" else _ESCAPES.get(e, e)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|[nrtbf\"/\\])", one, text)


def scan_lines(path: str, lines: Iterable[bytes]) -> Iterator[SecretFinding]:
    """Findings of each physical line (split on ``\\n`` as pi does), in order."""
    for number, raw in enumerate(lines, 1):
        if raw.endswith(b"\n"):
            raw = raw[:-1]
        if len(raw) < 8:
            continue
        yield from _line_findings(path, number, raw)


def scan_file(path: str) -> list[SecretFinding]:
    """Stream ``path`` one line at a time (every entry, every branch, the header too).  Only a
    regular file is opened: a FIFO would block and a device (a ``*.jsonl`` symlink to
    ``/dev/zero``) would never end."""
    with open_file(path) as fh:
        try:
            return list(scan_lines(path, fh))
        except OSError as e:
            raise os_error(path, e) from None


@dataclass(frozen=True)
class SecretsScan:
    """What ``scan_paths`` found: the files read, their findings, and what could not be read
    (``PisessError``, unreadable: a file, a directory below a named one)."""

    files: list
    findings: list
    unreadable: list
    empty: list = field(default_factory=list)  # directories named that hold no *.jsonl

    def unaccepted(self, allowed: frozenset) -> list:
        """Findings the allowlist does not accept (exit 1 when there are any)."""
        return [f for f in self.findings if f.fingerprint not in allowed]

    def summary(self, allowed: frozenset) -> dict:
        """The counts (``--json``'s ``summary``, every view's last line): files scanned, findings
        the allowlist does not accept, those it does, files with findings, findings by kind."""
        shown = self.unaccepted(allowed)
        kinds: dict = {}
        for f in shown:
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
        return {"fileCount": len(self.files), "findingCount": len(shown),
                "allowlistedCount": len(self.findings) - len(shown),
                "fileWithFindingsCount": len({f.path for f in shown}), "findingCountByKind": dict(sorted(kinds.items()))}

    def to_json(self, allowed: frozenset, allow_path: str | None) -> dict:
        """The secrets document (``pisess secrets --json``, without its ``version``): each file
        scanned with its findings (marked ``allowlisted`` or not; never the secret itself), what
        could not be read, the allowlist read and the ``summary``."""
        by_file: dict = {p: [] for p in self.files}
        for f in self.findings:
            by_file.setdefault(f.path, []).append(f.to_json(f.fingerprint in allowed))
        return {"files": [{"path": p, "findings": fs} for p, fs in by_file.items()],
                "unreadable": [e.to_dict() for e in self.unreadable], "allowlist": allow_path,
                "summary": self.summary(allowed)}


def scan_paths(targets: list[str]) -> SecretsScan:
    """Every ``*.jsonl`` named or below a named directory, scanned; what cannot be read is listed,
    the rest is still read (``empty``: the directories named that hold no ``*.jsonl``)."""
    from ..listing.paths import iter_jsonl

    files, findings, unreadable = [], [], []
    empty: list[str] = []
    for path, err in iter_jsonl(targets, empty):
        if err is None:
            try:
                findings.extend(scan_file(path))
                files.append(path)
                continue
            except PisessError as e:
                err = e
        unreadable.append(err)
    return SecretsScan(files, findings, unreadable, empty)


def default_target(root: str, cwd: str, all_projects: bool) -> str:
    """With no path: the project's sessions directory, or with ``all_projects`` the whole root."""
    from ..listing.paths import encode_cwd

    target = root if all_projects else os.path.join(root, encode_cwd(cwd))
    if not os.path.isdir(target):
        raise PisessError("not_found", f"no sessions at {target} (pass files, --all, --cwd or --sessions-dir)",
                          path=target)
    return target


def read_allowlist(explicit: str | None) -> tuple[frozenset, str | None]:
    """``explicit`` (it must exist), else ``.pisess-secrets-allow`` in the current directory when
    there is one: its fingerprints and the file read (``None``: none)."""
    path = explicit or ALLOWLIST_NAME
    try:
        with open_file(path, subject="allowlist") as fh:
            text = fh.read().decode("utf-8", "replace")
    except PisessError as e:
        if e.code != "not_found":
            raise
        if explicit:
            raise PisessError("usage", f"allowlist {explicit} does not exist", path=explicit) from None
        return frozenset(), None
    except OSError as e:
        raise os_error(path, e, subject="allowlist") from None
    return parse_allowlist(text, path), path


def parse_allowlist(text: str, source: str = ALLOWLIST_NAME) -> frozenset:
    """Fingerprints, one per line (``sha256:`` prefix optional); ``#`` starts a comment."""
    out = set()
    for n, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0].strip()
        if not body:
            continue
        token = body.lower()
        if token.startswith("sha256:"):
            token = token[7:]
        if not re.fullmatch(r"[0-9a-f]{64}", token):
            raise PisessError("usage", f"{source}:{n}: not a fingerprint (64 hex digits, as pisess secrets "
                              f"--format allowlist prints them): {body[:80]!r}", path=source, line=n)
        out.add(token)
    return frozenset(out)
