"""The status page in a real browser (``make test-ui``): Debian's Chromium, headless,
driven by Playwright, against a real ``modelwire serve`` on loopback whose upstream is
the built-in emulator. It signs in through the page's form and checks what a person
sees: no console error or failed resource, the request made just before, a credential
turning ``cooling`` after an injected 429 (by the page's own refresh, no reload), and
the page refused without the admin key. Screenshots go to tests/ui/screenshots/."""

from __future__ import annotations

import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from modelwire.config import load_config
from modelwire.credentials import CredentialPool
from modelwire.testing import emulator  # noqa: F401

pytestmark = pytest.mark.skipif(os.environ.get("MODELWIRE_TEST_UI") != "1",
                                reason="the browser tests run in `make test-ui` (MODELWIRE_TEST_UI=1)")

SHOTS = pathlib.Path(__file__).resolve().parent / "screenshots"
ADMIN_KEY = "adm-browser-" + "key-0123456789"
GATEWAY_KEY = "gw-browser-" + "key-0123456789"
KEY_ONE = "sk-" + "browser-first-key-0001"
KEY_TWO = "sk-" + "browser-second-key-0002"
REFUSED_STATUSES = {401}  # the one refusal the sign-in test provokes on purpose


def _chromium() -> str | None:
    given = os.environ.get("MODELWIRE_CHROMIUM")
    if given:
        return given if pathlib.Path(given).exists() else None
    return shutil.which("chromium") or shutil.which("chromium-browser") or next(
        (p for p in ("/usr/bin/chromium", "/usr/lib/chromium/chromium") if pathlib.Path(p).exists()), None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Served:
    def __init__(self, base: str, proc: subprocess.Popen[bytes], log: pathlib.Path) -> None:
        self.base, self.proc, self.log = base, proc, log

    def ask(self) -> httpx.Response:
        return httpx.post(self.base + "/v1/chat/completions", timeout=30,
                          headers={"authorization": f"Bearer {GATEWAY_KEY}"},
                          json={"model": "ds", "messages": [{"role": "user", "content": "hello"}]})


@pytest.fixture(scope="module")
def served(emulator, tmp_path_factory) -> Iterator[Served]:  # noqa: F811
    """``modelwire serve`` with admin keys, ``ds`` (two pooled keys on the emulator as
    DeepSeek, so the Client's ladder rotates) and ``spare`` as its fallback."""
    tmp = tmp_path_factory.mktemp("ui")
    path = tmp / "modelwire.yaml"
    path.write_text(
        "models:\n"
        f"  ds: {{provider: deepseek, model: browser-model, base_url: \"{emulator.openai_base_url('deepseek')}\"}}\n"
        f"  spare: {{provider: emulator, model: emulator-1, base_url: \"{emulator.openai_base_url()}\"}}\n"
        "default_model: ds\nfallback: [spare]\n"
        f"credential_pool: {{store: \"sqlite:///{tmp}/state.db\"}}\n"
        "prices: {deepseek/browser-model: {input: 0.5, output: 1.5}}\n"
        "gateway: {keys_env: UI_GATEWAY_KEYS, admin_keys_env: UI_ADMIN_KEYS}\n")
    pool = CredentialPool.for_provider("deepseek", config=load_config(str(path)))
    pool.add(KEY_ONE, label="first")
    pool.add(KEY_TWO, label="second")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(UI_GATEWAY_KEYS=GATEWAY_KEY, UI_ADMIN_KEYS=ADMIN_KEY, XDG_CONFIG_HOME=str(tmp),
               XDG_DATA_HOME=str(tmp))
    log = tmp / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "modelwire.cli", "serve", "--config", str(path),
                                 "--port", str(port)], env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(base + "/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail("modelwire serve did not start:\n" + log.read_text(errors="replace")[-3000:])
        time.sleep(0.05)
    try:
        yield Served(base, proc, log)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[ui-test]' (playwright)")
    path = _chromium()
    if path is None:
        pytest.skip("no Chromium found: apt-get install chromium (or set MODELWIRE_CHROMIUM)")
    SHOTS.mkdir(exist_ok=True)
    args = ["--no-sandbox"] if os.geteuid() == 0 else []  # Chromium's sandbox refuses root
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=args, headless=True)
        yield browser
        browser.close()


class Watched:
    """A page whose console errors and failed resources are kept."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.failed: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("requestfailed", lambda r: self.failed.append(f"{r.url}: {r.failure}"))
        page.on("response", lambda r: self.failed.append(f"{r.url}: {r.status}")
                if r.status >= 400 and r.status not in REFUSED_STATUSES else None)


@pytest.fixture(scope="module")
def signed_in(browser, served) -> Iterator[Watched]:
    served.ask()  # a request made before the page is opened: test 2 looks for it
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    watched = Watched(context.new_page())
    page = watched.page
    page.goto(served.base + "/ui/login")
    page.fill("#key", ADMIN_KEY)
    page.click("button[type=submit]")
    page.wait_for_url(served.base + "/ui")
    yield watched
    context.close()


def test_the_page_loads_through_its_sign_in_with_no_console_error_or_failed_resource(signed_in):
    page = signed_in.page
    page.wait_for_selector("table.recent")
    assert page.title() == "modelwire status"
    page.screenshot(path=str(SHOTS / "status-page.png"), full_page=True, caret="initial")
    assert signed_in.errors == [] and signed_in.failed == []
    assert ADMIN_KEY not in page.content()


def test_the_page_shows_the_request_made_just_before(signed_in):
    row = signed_in.page.locator("table.recent tbody tr").first
    cells = row.locator("td").all_inner_texts()
    assert cells[2:5] == ["ds", "ds", "deepseek/browser-model"] and cells[6] == "200"


def test_a_rate_limited_credential_shows_cooling_after_the_pages_own_refresh(signed_in, served, emulator):  # noqa: F811
    page = signed_in.page
    page.evaluate("window.__notReloaded = true")
    first = page.locator("table.credentials tbody tr", has_text="first")
    assert first.locator("td").nth(3).inner_text() == "ok"
    emulator.set_faults([{"fault": "rate_limit", "key": KEY_ONE[-6:], "times": 1, "retry_after": 900}])
    try:
        reply = served.ask()
    finally:
        emulator.clear_faults()
    assert reply.status_code == 200 and reply.headers["x-modelwire-attempts"] == "2"
    page.wait_for_function(
        "() => [...document.querySelectorAll('table.credentials tbody tr')].some("
        "r => r.innerText.includes('first') && r.innerText.includes('cooling'))", timeout=20_000)
    assert page.evaluate("window.__notReloaded") is True  # swapped in place, not reloaded
    cells = first.locator("td").all_inner_texts()
    assert cells[3] == "cooling" and 800 <= int(cells[4].split()[0]) <= 900
    second = page.locator("table.credentials tbody tr", has_text="second").locator("td").nth(3)
    assert second.inner_text() == "ok"
    page.screenshot(path=str(SHOTS / "status-page-cooling.png"), full_page=True, caret="initial")
    assert signed_in.errors == [] and signed_in.failed == []


def test_without_the_admin_key_the_page_is_refused_and_shows_no_data(browser, served):
    context = browser.new_context()
    page = context.new_page()
    try:
        response = page.goto(served.base + "/ui")
        assert response is not None and response.status == 401
        text = page.content()
        assert "browser-model" not in text and "first" not in text and "<table" not in text
        assert page.locator("form[action='/ui/login'] #key").count() == 1  # the sign-in form instead
        page.screenshot(path=str(SHOTS / "status-page-refused.png"), caret="initial")
        data = page.goto(served.base + "/ui/data")
        assert data is not None and data.status == 401 and "browser-model" not in page.content()
        page.goto(served.base + "/ui/login")
        page.fill("#key", GATEWAY_KEY)  # a client key is not an admin key
        with page.expect_response(served.base + "/ui/login") as answer:
            page.click("button[type=submit]")
        assert answer.value.status == 401 and "invalid admin key" in page.content()
    finally:
        context.close()
