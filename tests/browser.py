"""Debian's chromium, headless, driven through its own chromedriver by selenium (no browser is downloaded): what the
web page's tests and `bench ui` open the page with."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

CHROMIUM = ("chromium", "chromium-browser")
MISSING = "the web page's tests need Debian's chromium and chromium-driver: make system-deps (apt-get install ...)"


def _found(names: tuple[str, ...]) -> str:
    for name in names:
        path = shutil.which(name)
        if path:
            return path
    raise RuntimeError(MISSING)


@contextmanager
def chromium(width: int = 1280, height: int = 900) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    options.binary_location = _found(CHROMIUM)
    driver = webdriver.Chrome(options=options, service=Service(_found(("chromedriver",))))
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(check: Callable[[], T], timeout: float = 20.0, what: str = "the page") -> T:
    """The first truthy value of `check`, polled every 50 ms; AssertionError naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                return value
        except Exception as exc:  # the element is not there yet, or was redrawn under us
            last = exc
        time.sleep(0.05)
    raise AssertionError(f"{what}: not there after {timeout} s" + (f" ({last})" if last else ""))


def open_page(driver: Any, url: str, page: str, timeout: float = 20.0) -> None:
    """Load `url` (the page's address with its route) anew and wait until that page has drawn."""
    driver.get("about:blank")
    driver.get(url)
    wait_for(lambda: driver.find_element("tag name", "body").get_attribute("data-ready") == page, timeout, page)
