"""The report tests' browser: headless Chromium through Selenium, one per module.

Skipped with the reason where Chromium, its driver or Selenium is missing, except under CI (the
environment variable ``CI`` set), where that is a failure: ``make setup`` installs them as root."""
from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1400,1000")


def _missing() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        return "no chromium on PATH (apt-get install chromium chromium-driver; make setup does it as root)"
    if not shutil.which("chromedriver"):
        return "no chromedriver on PATH (apt-get install chromium-driver; make setup does it as root)"
    return None


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    why = _missing()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"browser tests cannot run under CI: {why}")
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser")
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    yield driver
    driver.quit()




@pytest.fixture(scope="session")
def analysed():
    """``analysed(name)``: the fixture dump ``name``, loaded once per session (``analyse`` of it
    reads each rank back from the on-disk cache), so that the report tests parse each fixture once."""
    import msinspect
    from tests.conftest import FIXTURES

    cache = {}

    def get(name: str):
        if name not in cache:
            cache[name] = msinspect.load_dump(FIXTURES / name)
        return cache[name]

    return get
