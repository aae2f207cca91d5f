"""The built site in a real browser: headless Chromium (Debian's /usr/bin/chromium, driven by the
playwright package) searches for a fragment of a real error message and lands on its rule page.
Screenshots go to test-artifacts/ at the repository root."""

from __future__ import annotations

import shutil
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from explainer._site import build_site

from conftest import ROOT
from test_site import team_rulebase

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = ROOT / "test-artifacts"
FRAGMENT = "mat1 and mat2 shapes cannot be multiplied"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="module")
def served_site(tmp_path_factory):
    """The site built with the default base URL, served by a local http.server on a free port."""
    root = tmp_path_factory.mktemp("browser-site")
    with pytest.MonkeyPatch.context() as env:
        env.delenv("EXPLAINER_RUNBOOK_URL", raising=False)
        result = build_site(root / "html", work=root / "work", rulebase=team_rulebase(root / "acme"))
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_QuietHandler, directory=str(result.out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser_page(tmp_path_factory):
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        pytest.fail(f"the playwright package is needed to drive Chromium (pip install -e '.[test]'): {exc}")
    if shutil.which(CHROMIUM) is None:
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium)")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        try:
            context = playwright.chromium.launch_persistent_context(
                str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS,
                viewport={"width": 1280, "height": 900}, color_scheme="light")
        except Exception as exc:  # noqa: BLE001 - any launch failure is this test's failure
            pytest.fail(f"Chromium ({CHROMIUM}) could not start: {exc}")
        try:
            yield context.new_page()
        finally:
            context.close()


def _search(page, text: str):
    page.locator("label.md-search__icon, .md-search__input").first.click()
    box = page.locator("input.md-search__input")
    box.fill("")
    box.type(text, delay=20)
    results = page.locator(".md-search-result__item")
    results.first.wait_for(state="visible", timeout=15_000)
    return results


def test_searching_a_real_message_lands_on_its_rule_page_with_the_fix(served_site, browser_page):
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser_page
    page.goto(served_site, wait_until="networkidle")
    assert "torch-explainer runbooks" in page.title()
    results = _search(page, FRAGMENT)
    page.screenshot(path=str(ARTIFACTS / "site-search.png"))
    first = results.first.locator("a").first
    assert "rules/shape.matmul/" in (first.get_attribute("href") or ""), (
        f"the first search result for {FRAGMENT!r} is {first.get_attribute('href')}, not the shape.matmul page")
    first.click()
    page.wait_for_url("**/rules/shape.matmul/**")
    fix = page.locator("h2#fix")
    fix.wait_for(state="visible")
    fix.scroll_into_view_if_needed()
    assert "nn.Linear(512, 10)" in page.locator("article").inner_text()
    page.wait_for_timeout(400)  # the header's title cross-fades on scroll
    page.screenshot(path=str(ARTIFACTS / "site-rule-fix.png"))
    page.locator("h1").first.scroll_into_view_if_needed()
    page.locator("label.md-header__button[for^='__palette']:visible").first.click()
    page.wait_for_function("document.body.getAttribute('data-md-color-scheme') === 'slate'")
    page.screenshot(path=str(ARTIFACTS / "site-rule-dark.png"))


def test_a_hostile_message_in_search_results_stays_text(served_site, browser_page):
    page = browser_page
    page.goto(served_site, wait_until="networkidle")
    _search(page, "acme odd failure")
    page.wait_for_timeout(300)
    assert page.evaluate("window.__pwned") is None, "a message's markup ran as HTML in the search results"
    assert page.locator("img[src='x']").count() == 0
