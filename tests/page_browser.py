"""A real browser for the tests of the HTML page: Playwright driving the system's Chromium.

Loaded as a pytest plugin by ``tests/conftest.py``.  Playwright's own browser download (``playwright
install``) is not used: the tests launch Debian's ``chromium`` package (``/usr/bin/chromium``, or
``$PISESS_CHROMIUM``).  Without one the browser tests are skipped with the reason; with
``PISESS_REQUIRE_BROWSER=1`` (``.ci/run`` sets it) a missing browser fails them instead, so CI
cannot go green by skipping them.

One Chromium per xdist worker while its tests need one: started by the first test that asks for
it and kept while the tests that follow ask too (``tests/conftest.py`` runs the tests that use it
one after the other), closed before a test that does not (``pytest_runtest_setup``) and at the end.  One page
is reused by the tests that only navigate (``page``); tests that change the viewport, the media or
watch requests and dialogs open a context of their own (``new_page``), closed at the end of the test.
Never open under another test: while Playwright's sync API is open, its event loop is the main
thread's running loop and its driver's watcher a second thread, so a test in the same worker that
runs asyncio (browse's pilot) or forks (reads shared among processes: none from a process with
threads) failed.  Each start is Playwright's driver and a Chromium, about 1.4 s of CPU.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REQUIRE_ENV = "PISESS_REQUIRE_BROWSER"
CHROMIUM_ENV = "PISESS_CHROMIUM"
DEBIAN_CHROMIUM = "/usr/bin/chromium"

#: How long a click or a wait may take before the test fails (Playwright's default is 30 s; a small
#: page answers in milliseconds, and a missing element should not cost half a minute per node).
ACTION_TIMEOUT_MS = 10_000

#: Chromium's flags for a shared CI machine: no sandbox (containers run as root, where Chromium's
#: sandbox refuses to start), /tmp instead of the small /dev/shm of a container.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"]


def find_chromium(environ: os._Environ | dict = os.environ) -> str | None:
    """The Chromium to launch: ``$PISESS_CHROMIUM``, else ``chromium`` on the PATH, else Debian's
    path; None when none of them is an executable file."""
    for candidate in (environ.get(CHROMIUM_ENV), shutil.which("chromium"), DEBIAN_CHROMIUM):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def browser_missing(reason: str, environ: os._Environ | dict = os.environ) -> None:
    """Skip the test for ``reason``, or fail it when ``$PISESS_REQUIRE_BROWSER`` is set (CI)."""
    if environ.get(REQUIRE_ENV, "") not in ("", "0"):
        pytest.fail(f"{reason} ({REQUIRE_ENV} is set: the browser tests must run)", pytrace=False)
    pytest.skip(f"{reason}; install Debian's chromium (apt-get install chromium) to run the page's browser tests")


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = find_chromium()
    if path is None:
        browser_missing(f"no Chromium found (${CHROMIUM_ENV}, chromium on the PATH, {DEBIAN_CHROMIUM})")
    assert path is not None
    return path


class _Chromium:
    """This process's Playwright and headless Chromium, with the page ``page`` reuses; started when
    a test asks, stopped by ``close``."""

    def __init__(self) -> None:
        self._playwright: Any = None
        self.browser: Any = None
        self._page: Any = None

    def open(self, executable: str) -> Any:
        if self.browser is None:
            try:
                from playwright.sync_api import sync_playwright
            except ImportError:
                browser_missing("the playwright package is not installed (pip install -e '.[test]')")
            self._playwright = sync_playwright().start()
            try:
                self.browser = self._playwright.chromium.launch(executable_path=executable, headless=True,
                                                                args=CHROMIUM_ARGS)
            except BaseException:
                self.close()
                raise
        return self.browser

    def shared_page(self, executable: str) -> Any:
        if self._page is None:
            context = self.open(executable).new_context(viewport={"width": 1280, "height": 800})
            context.set_default_timeout(ACTION_TIMEOUT_MS)
            self._page = context.new_page()
        return self._page

    def close(self) -> None:
        page, browser, playwright = self._page, self.browser, self._playwright
        self._page = self.browser = self._playwright = None
        try:
            if page is not None:
                page.context.close()
            if browser is not None:
                browser.close()
        finally:
            if playwright is not None:
                playwright.stop()


_CHROMIUM = _Chromium()


def uses_browser(item: pytest.Item) -> bool:
    return "browser" in getattr(item, "fixturenames", ())


@pytest.hookimpl(tryfirst=True)  # (before the test's fixtures are set up)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if _CHROMIUM.browser is not None and not uses_browser(item):
        _CHROMIUM.close()


def pytest_sessionfinish() -> None:
    _CHROMIUM.close()


@pytest.fixture()
def browser(chromium_path: str) -> Any:
    """This worker's headless Chromium (see the module's docstring)."""
    return _CHROMIUM.open(chromium_path)


@pytest.fixture()
def _shared_page(browser: Any, chromium_path: str) -> Any:
    return _CHROMIUM.shared_page(chromium_path)


@pytest.fixture()
def page(_shared_page: Any) -> Any:
    """The module's page, reused from test to test (navigate it with ``page.goto``): a screen
    1280x800, no hooks left by an earlier test."""
    _shared_page.set_viewport_size({"width": 1280, "height": 800})
    _shared_page.emulate_media(media="screen")
    return _shared_page


@pytest.fixture()
def new_page(browser: Any) -> Iterator[Callable[..., Any]]:
    """``new_page(**context_options)``: a page in a fresh context (its own viewport, scripts on or
    off, its own request log), closed after the test."""
    contexts: list[Any] = []

    def _open(**options: Any) -> Any:
        options.setdefault("viewport", {"width": 1280, "height": 800})
        context = browser.new_context(**options)
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        contexts.append(context)
        return context.new_page()

    yield _open
    for context in contexts:
        context.close()


def file_url(path: str | Path, fragment: str = "") -> str:
    """The ``file://`` URL of ``path`` with ``fragment`` (``#...`` or ``?...``) appended."""
    return Path(path).resolve().as_uri() + fragment
