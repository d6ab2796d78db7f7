"""The secret scan: one true positive per kind, realistic near-misses that must stay quiet, the
file scan (escaped JSON, every branch, the header), redaction, the allowlist and the command.

Every token below is assembled at run time from a seeded generator, so this file holds nothing a
secret scanner (ours, or a code host's push protection) would flag.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from conftest import assistant, header, user, write_session
from pisess.cli.app import app
from pisess.core.analyses.secrets import (
    KINDS,
    find_secrets,
    fingerprint,
    names_secret,
    parse_allowlist,
    redact,
    redact_text,
    scan_file,
    scan_lines,
)
from pisess.core.errors import PisessError

ALNUM = string.ascii_letters + string.digits


def rnd(n: int, alphabet: str = ALNUM, seed: int = 0) -> str:
    r = random.Random(f"{n}-{seed}-{alphabet[:3]}")
    while True:
        s = "".join(r.choice(alphabet) for _ in range(n))
        # random, but with every class present, as real keys are
        if alphabet != ALNUM or (any(c.isdigit() for c in s) and any(c.islower() for c in s)
                                 and any(c.isupper() for c in s)):
            return s


def b64url(obj: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


SK = "sk" + "-"
PEM_BODY = "\n".join(rnd(64, ALNUM + "+/", seed=i) for i in range(6))
JWT = ".".join([b64url({"alg": "HS256", "typ": "JWT"}), b64url({"sub": "1234567890", "name": "Ann", "iat": 1516239022}),
                rnd(43, ALNUM + "-_")])

# kind -> (text holding one secret, the secret)
TRUE_POSITIVES = {
    "anthropic_api_key": "export ANTHROPIC_API_KEY=" + SK + "ant-api03-" + rnd(93, ALNUM + "-_") + "AA",
    "openai_api_key": "client = OpenAI(api_key='" + SK + "proj-" + rnd(74, ALNUM + "-_") + "T3BlbkFJ" + rnd(74) + "')",
    "google_api_key": "GET https://maps.googleapis.com/maps/api/geocode/json?key=" + "AI" + "za" + rnd(35) + "&a=1",
    "google_oauth_client_secret": '{"client_secret": "' + "GOC" + "SPX-" + rnd(28) + '"}',
    "aws_access_key_id": "aws_access_key_id = " + "AK" + "IA" + rnd(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
    "aws_secret_access_key": "aws_secret_access_key = " + rnd(38, ALNUM + "/+") + "/x",
    "github_token": "git remote set-url origin https://github.com/o/r.git # token " + "gh" + "p_" + rnd(36),
    "gitlab_token": "PRIVATE-TOKEN: " + "gl" + "pat-" + rnd(20, ALNUM + "-_"),
    "slack_token": "SLACK_BOT=" + "xo" + "xb-" + "123456789012-1234567890123-" + rnd(24),
    "slack_webhook": "curl -X POST " + "https://hooks.slack" + ".com/services/T0AAAAAAA/B0BBBBBBB/" + rnd(24),
    "stripe_key": "stripe.api_key = '" + "sk_" + "live_" + rnd(24) + "'",
    "private_key": "$ cat ~/.ssh/id_rsa\n-----BEGIN RSA " + "PRIVATE KEY-----\n" + PEM_BODY + "\n-----END RSA "
                   + "PRIVATE KEY-----\n",
    "jwt": "Cookie: session=" + JWT + "; Path=/",
    "basic_auth_url": "git clone https://alice:" + "s3cr3t" + "-Pa55@git.example.org/team/repo.git",
    "env_secret": "$ cat .env\nDB_HOST=localhost\nDB_PASSWORD=" + "hunter" + "2!x\nPORT=5432\n",
    "high_entropy_assignment": 'settings = {"session_secret": "' + rnd(40, ALNUM + "_-", seed=7) + '"}',
}

NEAR_MISSES = {
    "sha256 of a file": "sha256:" + hashlib.sha256(b"a").hexdigest() + "  dist/app-1.2.3.tar.gz",
    "sha256sum output": hashlib.sha256(b"b").hexdigest() + "  package-lock.json\n" + hashlib.sha256(b"c").hexdigest()
                        + "  yarn.lock",
    "git log": "commit " + hashlib.sha1(b"d").hexdigest() + "\nAuthor: Ann <ann@example.org>\n\n    Fix the thing",
    "git short ids": "a1b2c3d fix parser\n9f8e7d6 add tests\nMerge: 1234abc 5678def",
    "uuids": "session " + str(uuid.UUID(int=random.Random(1).getrandbits(128))) + " request_id="
             + str(uuid.UUID(int=random.Random(2).getrandbits(128))),
    "base64 blob in text": base64.b64encode(random.Random(3).randbytes(3000)).decode(),
    "npm integrity": '"integrity": "sha512-' + base64.b64encode(hashlib.sha512(b"e").digest()).decode() + '"',
    "placeholders": "OPENAI_API_KEY=your-api-key-here\nDB_PASSWORD=changeme\nGITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}\n"
                    "API_KEY=<your key>\nSECRET_KEY=xxxxxxxxxxxxxxxx\nexport TOKEN=$TOKEN",
    "settings that are not secrets": "MAX_TOKENS=4096\nTOKEN_URL=https://auth.example.org/token\nPWD=/home/u/proj\n"
                                     "SECRET_KEY_FILE=/run/secrets/key\nPASSWORD_MIN_LENGTH=12",
    "code reading a secret": 'PASSWORD = os.environ["PASSWORD"]\nAPI_KEY = get_key()\ntoken = request.headers["X"]',
    "urls with placeholder passwords": "postgres://user:password@localhost:5432/db https://u:${PASS}@h.example.org",
    "pem parser code": 'if line.startswith("-----BEGIN RSA ' + 'PRIVATE KEY-----"):\n    parse(line)',
    "aws documentation keys": "AK" + "IAIOSFODNN7EXAMPLE " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "provider ids": "call_ab84300fda099bf4fac9d2f8|fc_9263ddbaf9bf739cd3878247720201ef0267b55c "
                    "resp_e89af9ed025601c567fbb5522e53a50ae8dae18aefd9ff8d toolu_01A09q90qw90lq917835lq9",
    "paths and names": "token = src/lib/auth/token.ts\naccess_token = response.json()['x']\napi_key: API_KEY_FROM_ENV",
    "words with sk-": "pip install scikit-learn; task-runner-for-everything-and-more-and-more-stuff",
    "token counts": "tokenizer: cl100k_base\ntokens: 12345\ncache_key: users:page:2\ntotalTokens: 1703",
    "jwt-looking but not json": "eyJ" + rnd(20) + ".eyJ" + rnd(20) + "." + rnd(20),
    # documentation placeholders from real pi sessions: a known prefix alone, or ending in an ellipsis
    "doc placeholders": "export ANTHROPIC_API_KEY=sk-ant-...\nOPENAI_API_KEY=sk-...\nGROQ_API_KEY=gsk_...\n"
                        "TOKEN=ghp_\u2026 and API_KEY=\"abc123def…\"",
}


@pytest.mark.parametrize("kind", sorted(TRUE_POSITIVES))
def test_each_kind_fires_once_with_a_masked_preview(kind):
    """Each sample yields exactly one finding of its kind, and the preview never holds the secret."""
    found = find_secrets(TRUE_POSITIVES[kind])
    assert [m.kind for m in found] == [kind]
    m = found[0]
    assert m.secret not in m.preview and len(m.secret) >= 6
    assert "\u2026" in m.preview


def test_the_corpus_covers_every_kind():
    """No rule kind goes untested."""
    assert set(TRUE_POSITIVES) == set(KINDS)


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_near_misses_stay_quiet(name):
    """Hashes, commit ids, UUIDs, base64, placeholders, provider ids and code do not fire."""
    assert find_secrets(NEAR_MISSES[name]) == []


def test_previews_look_like_the_documented_ones():
    """Known prefix, an ellipsis, the last four characters; short values show their length only."""
    key = SK + "ant-api03-" + rnd(90, ALNUM + "-_") + "Q9xA"
    assert find_secrets(key)[0].preview == "sk-ant-\u2026Q9xA"
    env = find_secrets("DB_PASSWORD=hunter2!x")[0]
    assert env.preview == "DB_PASSWORD=\u2026(9 chars)"
    url = find_secrets("https://bob:" + "pw-" + "12345@db.example.org/x")[0]
    assert url.preview == "https://bob:\u2026@db.example.org"
    pem = find_secrets(TRUE_POSITIVES["private_key"])[0]
    assert pem.preview.startswith("-----BEGIN RSA PRIVATE KEY-----\u2026(")


def test_specific_rules_win_over_generic_ones():
    """An OpenAI key in a .env line is reported once, as an OpenAI key."""
    text = "OPENAI_API_KEY=" + SK + rnd(20) + "T3BlbkFJ" + rnd(20)
    assert [m.kind for m in find_secrets(text)] == ["openai_api_key"]


def test_truncated_private_key_still_fires():
    """A key block cut off by a tool's output limit (no END line) is still a private key."""
    text = "-----BEGIN OPENSSH " + "PRIVATE KEY-----\n" + PEM_BODY[:200] + "\n[output truncated]"
    assert [m.kind for m in find_secrets(text)] == ["private_key"]


def test_json_member_with_a_secret_name_is_assignment_context():
    """In tool arguments, {"password": "…"} and {"apiKey": "…"} are assignments too."""
    args = {"env": {"DATABASE_PASSWORD": "hunter2!x"}, "apiKey": rnd(32, seed=9), "path": "a.txt",
            "cacheKey": "users:page:2", "thinkingSignature": base64.b64encode(random.Random(4).randbytes(64)).decode()}
    _, found = redact(args)
    assert sorted(m.kind for m in found) == ["env_secret", "high_entropy_assignment"]


def test_key_names():
    """What counts as a secret's name, and what does not."""
    for k in ("DB_PASSWORD", "apiKey", "x-api-key", "ACCESS_TOKEN", "client_secret", "AUTH_TOKEN", "passphrase"):
        assert names_secret(k), k
    for k in ("MAX_TOKENS", "TOKEN_URL", "PWD", "SECRET_NAME", "cacheKey", "primaryKey", "thinkingSignature",
              "totalTokens", "PASSWORD_MIN_LENGTH", "keyboard"):
        assert not names_secret(k), k


def test_redaction_replaces_only_the_secret():
    """[REDACTED:kind] stands where the secret was; the text around it is kept."""
    text = TRUE_POSITIVES["basic_auth_url"]
    found = find_secrets(text)
    assert redact_text(text, found) == "git clone https://alice:[REDACTED:basic_auth_url]@git.example.org/team/repo.git"
    env = TRUE_POSITIVES["env_secret"]
    assert "DB_PASSWORD=[REDACTED:env_secret]\nPORT=5432" in redact_text(env, find_secrets(env))


def test_redact_value_copies_and_skips_image_data():
    """redact() returns a new value, leaves the input alone, and never looks inside image data."""
    token = "gh" + "p_" + rnd(36)
    v = {"content": [{"type": "text", "text": "t " + token},
                     {"type": "image", "mimeType": "image/png", "data": token}]}
    out, found = redact(v)
    assert out["content"][0]["text"] == "t [REDACTED:github_token]"
    assert out["content"][1]["data"] == token and v["content"][0]["text"] == "t " + token
    assert len(found) == 1


def _redacted_by_recursion(v, top=True, skip=frozenset()):
    """What ``redact`` gives, written the plain recursive way (for values of a few levels)."""
    if isinstance(v, str):
        return redact_text(v, find_secrets(v))
    if isinstance(v, dict):
        image = v.get("type") == "image"
        return {k: x if (image and k == "data") or (top and k in skip) else _redacted_by_recursion(x, False)
                for k, x in v.items()}
    if isinstance(v, list):
        return [_redacted_by_recursion(x, False) for x in v]
    return v


_TOKEN = "gh" + "p_" + "a1B2" * 9
_json_values = st.recursive(
    st.none() | st.integers() | st.sampled_from(["x", "say " + _TOKEN, _TOKEN, "image", "data"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["type", "data", "id", "text", "k"]), inner, max_size=3),
    max_leaves=12)


@given(_json_values, st.sampled_from([frozenset(), frozenset({"id", "text"})]))
def test_redact_is_the_recursive_redaction_and_leaves_its_input_alone(value, skip):
    """Every string masked where its secrets are (not image data, not a skipped top-level member),
    every container on the way to a masked string copied, the input unchanged; by way of the walk
    that keeps its way as links (thousands of levels)."""
    before = json.dumps(value)
    out, found = redact(value, skip=skip)
    assert out == _redacted_by_recursion(value, True, skip)
    assert json.dumps(value) == before
    assert len(found) == json.dumps(out).count("[REDACTED:")


def test_a_secret_thousands_of_levels_down_is_masked_in_a_copy():
    deepest = [{"text": _TOKEN}, "ok"]
    v: object = deepest
    for _ in range(5000):
        v = [v]
    out, found = redact({"details": v})
    assert [m.kind for m in found] == ["github_token"]
    inner = out["details"]
    for _ in range(5000):
        inner = inner[0]
    assert inner == [{"text": "[REDACTED:github_token]"}, "ok"]
    assert deepest == [{"text": _TOKEN}, "ok"] and inner is not deepest


def test_fingerprint_is_sha256_of_kind_and_secret():
    """The allowlist fingerprint is sha256(kind + secret), hex."""
    m = find_secrets(TRUE_POSITIVES["github_token"])[0]
    assert m.fingerprint == hashlib.sha256((m.kind + m.secret).encode()).hexdigest() == fingerprint(m.kind, m.secret)


# --- files -----------------------------------------------------------------------------------------


def _session_with_secrets(tmp_path):
    token = "gh" + "p_" + rnd(36, seed=5)
    pem_line = json.dumps({"type": "text", "text": TRUE_POSITIVES["private_key"]})
    escaped = pem_line.replace("-", "\\u002d")  # JSON escapes hide the pattern from a raw-text scan
    tool = ('{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-07-25T09:14:03.512Z","message":'
            '{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[' + escaped + '],"isError":false,'
            '"timestamp":3}}')
    img = base64.b64encode(random.Random(6).randbytes(4000)).decode()
    lines = [
        header(cwd="/home/u/proj-" + "AK" + "IA" + rnd(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")),
        user("u1", None, [{"type": "text", "text": "see image"},
                          {"type": "image", "mimeType": "image/png", "data": img}]),
        assistant("a1", "u1", "ok"),
        tool,
        user("u2", "a1", "on another branch: " + token),
        '{"type":"message","id":"u3","parentId":"r1","timestamp":"x","message":{"role":"user",'
        '"content":"DB_PASSWORD=hunter2!x',  # cut off mid-JSON
    ]
    return write_session(tmp_path, lines), token


def test_file_scan_finds_escaped_branched_header_and_broken_lines(tmp_path):
    """Header cwd, JSON-escaped PEM, an inactive branch and a truncated last line are all scanned,
    each finding located by physical line, entry id and role; the image stays quiet."""
    path, token = _session_with_secrets(tmp_path)
    found = scan_file(path)
    got = [(f.line, f.entry_id, f.role or f.type, f.kind) for f in found]
    assert got == [(1, None, "session", "aws_access_key_id"), (4, "r1", "toolResult", "private_key"),
                   (5, "u2", "user", "github_token"), (6, None, None, "env_secret")]
    assert found[0].field == "cwd" and found[1].field == "message.content[0].text"
    assert all(token not in f.preview for f in found)


def test_scan_streams_lines(tmp_path):
    """scan_lines takes any iterable of lines: the file is never read whole."""
    seen = []

    def lines():
        for i in range(3):
            seen.append(i)
            yield (json.dumps(user(f"u{i}", None, "DB_PASSWORD=hunter2!x")) + "\n").encode()

    it = scan_lines("f.jsonl", lines())
    first = next(it)
    assert first.line == 1 and seen == [0]


def test_allowlist_parsing():
    """One fingerprint a line, optional sha256: prefix, # comments; anything else is a usage error."""
    fp = "a" * 64
    assert parse_allowlist(f"# accepted\n{fp}  # test key\n\nsha256:{'B' * 64}\n") == {fp, "b" * 64}
    with pytest.raises(PisessError) as e:
        parse_allowlist("not-a-fingerprint\n", "allow")
    assert e.value.code == "usage" and e.value.line == 1


# --- the command -----------------------------------------------------------------------------------


@pytest.fixture()
def runner(monkeypatch, tmp_path) -> CliRunner:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    try:
        return CliRunner(mix_stderr=False)
    except TypeError:
        return CliRunner()


def run(runner, *args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_cli_exit_codes_and_no_secret_in_any_output(runner, tmp_path):
    """Exit 1 with findings (never printing a secret in any format), 0 on a clean file, 2 on a
    missing path."""
    path, token = _session_with_secrets(tmp_path / "s")
    clean = write_session(tmp_path / "c", [header(), user("u1", None, "hello"), assistant("a1", "u1", "hi")])
    for fmt in ("text", "json", "github", "allowlist"):
        r = run(runner, "secrets", path, "--format", fmt)
        assert r.exit_code == 1, (fmt, r.stderr)
        assert token not in r.stdout + r.stderr and "hunter2" not in r.stdout + r.stderr
    r = run(runner, "secrets", clean)
    assert r.exit_code == 0 and "no secrets found" in r.stdout
    assert run(runner, "secrets", str(tmp_path / "missing.jsonl")).exit_code == 2
    assert run(runner, "secrets", path, "--format", "xml").exit_code == 2


def test_cli_text_and_json_shape(runner, tmp_path):
    """Text: file:line: kind preview (entry, role, field); JSON: version, files, summary."""
    path, _ = _session_with_secrets(tmp_path / "s")
    r = run(runner, "secrets", path)
    assert "s/session.jsonl:5: github_token ghp_\u2026" in r.stdout
    assert "entry u2 \u00b7 user \u00b7 message.content[0].text" in r.stdout
    assert "4 secrets found in 1 file" in r.stdout
    doc = json.loads(run(runner, "secrets", path, "--json").stdout)
    assert doc["version"] == 2 and doc["summary"]["findingCount"] == 4
    f = doc["files"][0]["findings"][2]
    keys = {"path", "line", "entryId", "type", "role", "field", "kind", "preview", "fingerprint", "allowlisted"}
    assert keys <= set(f)


def test_cli_github_annotations(runner, tmp_path, monkeypatch):
    """--format github (automatic under GITHUB_ACTIONS) prints ::error annotations with lines."""
    path, _ = _session_with_secrets(tmp_path / "s")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    r = run(runner, "secrets", path)
    assert r.exit_code == 1 and "::error file=" in r.stdout and ",line=5,title=secret github_token::" in r.stdout


def test_cli_allowlist_round_trip(runner, tmp_path):
    """--format allowlist output, saved as .pisess-secrets-allow in the current directory, accepts
    every finding: exit 0; --allowlist FILE works the same; a missing --allowlist is a usage error."""
    path, _ = _session_with_secrets(tmp_path / "s")
    lines = run(runner, "secrets", path, "--format", "allowlist").stdout
    assert len(lines.splitlines()) == 4 and all(len(ln.split()[0]) == 64 for ln in lines.splitlines())
    (tmp_path / ".pisess-secrets-allow").write_text("# reviewed\n" + lines)
    r = run(runner, "secrets", path)
    assert r.exit_code == 0 and "4 allowlisted" in r.stdout
    doc = json.loads(run(runner, "secrets", path, "--json").stdout)
    assert all(f["allowlisted"] for f in doc["files"][0]["findings"])
    (tmp_path / ".pisess-secrets-allow").unlink()
    (tmp_path / "ci-allow").write_text(lines)
    assert run(runner, "secrets", path, "--allowlist", "ci-allow").exit_code == 0
    assert run(runner, "secrets", path, "--allowlist", "nope").exit_code == 2
    (tmp_path / "bad-allow").write_text("hello\n")
    assert run(runner, "secrets", path, "--allowlist", "bad-allow").exit_code == 2


def test_cli_default_is_the_project_and_all_is_the_root(runner, tmp_path):
    """Without PATH: the sessions of --cwd's project; --all: every project; both with PATH: usage."""
    root = tmp_path / "root"
    write_session(root / "--work-a--", [header(), user("u1", None, "DB_PASSWORD=hunter2!x")], name="a.jsonl")
    write_session(root / "--work-b--", [header(), user("u1", None, "fine")], name="b.jsonl")
    assert run(runner, "secrets", "--sessions-dir", str(root), "--cwd", "/work/b").exit_code == 0
    assert run(runner, "secrets", "--sessions-dir", str(root), "--cwd", "/work/a").exit_code == 1
    r = run(runner, "secrets", "--all", "--sessions-dir", str(root))
    assert r.exit_code == 1 and "2 files scanned" in r.stdout
    assert run(runner, "secrets", "x.jsonl", "--all").exit_code == 2


def test_pre_commit_hooks_file():
    """.pre-commit-hooks.yaml exposes validate and secrets for *.jsonl."""
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / ".pre-commit-hooks.yaml").read_text()
    for hook in ("pisess validate", "pisess secrets"):
        assert f"entry: {hook}" in text
    assert text.count("files: '\\.jsonl$'") == 2


def test_shipped_examples_are_clean():
    """The example sessions (realistic provider ids, hashes, long base64-ish ids) give no finding."""
    from importlib import resources

    with resources.as_file(resources.files("pisess") / "examples" / "sessions") as d:
        for p in sorted(d.rglob("*.jsonl")):
            assert scan_file(str(p)) == []



def test_pipes_and_devices_are_refused_not_read(runner, tmp_path):
    """A FIFO would block and a symlink to /dev/zero would never end: both are unreadable (exit 2)."""
    import os

    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.jsonl"
    zero.symlink_to("/dev/zero")
    with pytest.raises(PisessError) as e:
        scan_file(str(fifo))
    assert e.value.code == "storage"
    r = run(runner, "secrets", str(tmp_path))
    assert r.exit_code == 2 and "2 unreadable" in r.stdout


def test_new_core_modules_stay_pure():
    """Importing the export and secrets cores loads neither typer nor rich."""
    import subprocess
    import sys

    probe = ("import sys, pisess.core.analyses.export, pisess.core.analyses.secrets; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'click')))")
    out = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


def test_the_page_imports_the_secret_patterns_only_to_mask():
    """The export and page cores load ``secrets`` (its patterns: 9 ms of every export's start) only
    where something is masked or counted (a big page's static page and its count are made in the
    child beside it, not in the process that writes the page)."""
    import subprocess
    import sys

    probe = ("import sys, pisess.core.analyses.export, pisess.core.analyses.page as p; "
             "print('pisess.core.analyses.secrets' in sys.modules); "
             "p.redact_value('ghp_' + 'a' * 36); print('pisess.core.analyses.secrets' in sys.modules)")
    out = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.split() == ["False", "True"], out.stderr


@pytest.mark.parametrize("fmt", ["allowlist", "github", "text"])
def test_secrets_refuses_json_with_another_format(tmp_path, monkeypatch, fmt):
    """``--format allowlist --json`` printed the allowlist and ignored --json; validate refuses the
    same pair as a usage error, with the JSON error document."""
    import json

    from conftest import cli_runner, header, invoke, user, write_session

    path = write_session(tmp_path, [header(), user("u1", None)])
    r = invoke(cli_runner(monkeypatch), "secrets", "--format", fmt, "--json", path)
    assert r.exit_code == 2, r.stdout
    assert json.loads(r.stdout)["error"]["code"] == "usage"
    assert "ask for two outputs" in r.stderr


@pytest.mark.parametrize("command", ["validate", "secrets", "stats", "du"])
def test_a_directory_without_sessions_is_not_found_in_every_command(tmp_path, monkeypatch, command):
    """validate and secrets said "0 files checked" and exit 0 for a directory holding no *.jsonl
    (a mistyped path passed CI); stats, du and search exit 1 naming it: all of them do."""
    from conftest import cli_runner, header, invoke, user, write_session

    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    (empty / "notes.txt").write_text("x")
    runner = cli_runner(monkeypatch)
    r = invoke(runner, command, str(empty))
    assert r.exit_code == 1, (r.stdout, r.stderr)
    assert f"{empty} holds no *.jsonl files" in r.stderr
    # beside a directory that has sessions it is named on stderr, and the rest is read
    full = tmp_path / "full"
    write_session(full, [header(), user("u1", None)])
    r = invoke(runner, command, str(empty), str(full))
    assert r.exit_code == 0, (r.stdout, r.stderr)
    assert f"{empty}: no *.jsonl files in it" in r.stderr
