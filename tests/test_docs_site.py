"""The built documentation site, opened in headless Chromium (marked ``docs``: run after building).

Build, then run (what .ci/run does):

    python -m sphinx -W --keep-going -n -b html docs docs/_build/html
    python -m pytest -m docs

Every page of ``docs/_build/html`` (or ``$SLR_DOCS_SITE``) is loaded from disk by Chromium
(Debian's ``chromium`` and ``chromium-driver``) through Selenium. Checked on each page: MathJax
typeset every equation (each math element holds an ``mjx-container``, no ``mjx-merror``, no raw
``$...$``, ``\\(`` or ``\\[`` left in the text), the browser logged no error, nothing was fetched from
the network (the site must work offline), every image loaded, and every internal link points to an
existing page and anchor. Screenshots of a derivation page and of the gallery are written to
``docs/screenshots/`` for docs/README.md.

Without Chromium, or without a built site, the tests fail when ``CI=true`` and skip otherwise.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parent.parent
SITE = Path(os.environ.get("SLR_DOCS_SITE", ROOT / "docs" / "_build" / "html"))
SCREENSHOTS = ROOT / "docs" / "screenshots"
IN_CI = os.environ.get("CI", "").lower() == "true"
INSTALL = "apt-get update && apt-get install -y chromium chromium-driver"
BUILD = "python -m sphinx -W --keep-going -n -b html docs docs/_build/html"
RAW_MATH = re.compile(r"\$[^$\s][^$\n]*\$|\\\(|\\\[")


def _unavailable(message: str):
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


def _browser_paths():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not chromium or not driver:
        _unavailable(f"Chromium or its driver is not installed (chromium={chromium}, chromedriver={driver}); "
                     f"install them with: {INSTALL}")
    return chromium, driver


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium, driver_path = _browser_paths()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("selenium is not installed: pip install -e '.[docs]'")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage", "--window-size=1400,1600",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    except Exception as exc:  # the browser is installed but does not start
        _unavailable(f"Chromium did not start ({type(exc).__name__}: {exc}); install it with: {INSTALL}")
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    yield driver
    driver.quit()


def _pages():
    if not (SITE / "index.html").is_file():
        return []
    return sorted(p for p in SITE.rglob("*.html") if "_static" not in p.parts and p.name not in {"search.html", "genindex.html"})


@pytest.fixture(scope="module")
def pages():
    found = _pages()
    if not found:
        _unavailable(f"no built site in {SITE}: build it first with: {BUILD}")
    return found


_WAIT_FOR_MATHJAX = """
const done = arguments[arguments.length - 1];
if (!window.MathJax || !MathJax.startup || !MathJax.startup.promise) { done('none'); return; }
MathJax.startup.promise.then(() => done('typeset'), (e) => done('error: ' + e));
"""

_PAGE_FACTS = """
const text = (() => {
  const body = document.querySelector('div.body') || document.body;
  const copy = body.cloneNode(true);
  copy.querySelectorAll('pre, code, mjx-container, script').forEach(e => e.remove());
  return copy.innerText;
})();
return {
  math: document.querySelectorAll('.math').length,
  untypeset: Array.from(document.querySelectorAll('.math')).filter(e => !e.querySelector('mjx-container')).length,
  containers: document.querySelectorAll('mjx-container').length,
  merrors: document.querySelectorAll('mjx-merror').length,
  text: text,
  links: Array.from(document.querySelectorAll('a[href]')).map(a => a.href),
  broken_images: Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src),
  remote: performance.getEntriesByType('resource').map(r => r.name).filter(n => !n.startsWith('file:')),
};
"""


def _ids(path: Path, cache={}) -> set:
    if path not in cache:
        cache[path] = set(re.findall(r'\bid="([^"]+)"', path.read_text(errors="replace")))
    return cache[path]


def _broken_links(links) -> list:
    broken = []
    for href in links:
        url = urlparse(href)
        if url.scheme != "file":
            continue  # external links are not followed (no network); none is loaded, see `remote`
        target = Path(unquote(url.path))
        if target.is_dir():
            target = target / "index.html"
        if not target.is_file():
            broken.append(href)
        elif url.fragment and target.suffix == ".html" and unquote(url.fragment) not in _ids(target):
            broken.append(href)
    return broken


def _check(browser, page: Path) -> list:
    browser.get_log("browser")  # drop messages of the previous page
    browser.get(page.as_uri())
    mathjax = browser.execute_async_script(_WAIT_FOR_MATHJAX)
    facts = browser.execute_script(_PAGE_FACTS)
    name, problems = page.relative_to(SITE).as_posix(), []
    if facts["math"] and mathjax != "typeset":
        problems.append(f"{name}: {facts['math']} equations but MathJax is {mathjax}")
    if facts["untypeset"] or facts["merrors"]:
        problems.append(f"{name}: {facts['untypeset']} equations not typeset, {facts['merrors']} TeX errors")
    raw = RAW_MATH.findall(facts["text"])
    if raw:
        problems.append(f"{name}: raw TeX left in the text: {raw[:3]}")
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    if errors:
        problems.append(f"{name}: console errors: {errors[:3]}")
    if facts["remote"]:
        problems.append(f"{name}: fetched from the network: {facts['remote'][:3]}")
    if facts["broken_images"]:
        problems.append(f"{name}: images that did not load: {facts['broken_images'][:3]}")
    broken = _broken_links(facts["links"])
    if broken:
        problems.append(f"{name}: broken internal links: {broken[:5]}")
    return problems, facts


def test_every_page_renders_offline_with_typeset_math_and_working_links(browser, pages):
    problems = []
    for page in pages:
        found, facts = _check(browser, page)
        problems += found
        # Every derivation page is mostly equations: none may reach the browser without any.
        if page.parent.name == "math" and page.name != "index.html" and facts["containers"] == 0:
            problems.append(f"{page.relative_to(SITE)}: no typeset equation")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page, shot", [("math/risk.html", "math.png"),
                                        ("_generated/gallery.html", "gallery.png")])
def test_screenshots_for_the_docs_readme(browser, pages, page, shot):
    path = SITE / page
    problems, facts = _check(browser, path)
    assert not problems, "\n".join(problems)
    SCREENSHOTS.mkdir(exist_ok=True)
    out = SCREENSHOTS / shot
    assert browser.save_screenshot(str(out)) and out.stat().st_size > 10_000


def test_the_checks_catch_raw_tex_and_broken_links(tmp_path):
    assert RAW_MATH.findall("the risk $R = \\varepsilon^2$ and \\(x\\)") == ["$R = \\varepsilon^2$", "\\("]
    assert RAW_MATH.findall("costs $5 and $6 per run") == ["$5 and $"]
    page = tmp_path / "a.html"
    page.write_text('<h1 id="top">x</h1>')
    assert _broken_links([page.as_uri() + "#top", "https://example.org/x"]) == []
    assert _broken_links([page.as_uri() + "#nowhere", (tmp_path / "b.html").as_uri()]) == [
        page.as_uri() + "#nowhere", (tmp_path / "b.html").as_uri()]
