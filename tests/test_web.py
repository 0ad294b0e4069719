"""The daemon's web page (issue 46), against real daemons: its refusals over raw HTTP (a foreign Host or Origin, no
token, another address, GET for data), and every page in Debian's chromium (tests/browser.py): a search whose results
equal `memctl search`'s, a note opened at a citation, today's notes in the timeline, the block a Claude Code hook was
given in the recall log, forgetting from there, and the status page's bar moving during a first index."""

from __future__ import annotations

import datetime as dt
import http.client
import json
import os
import socket
import stat
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import daemon as d
from .browser import chromium, open_page, wait_for
from .conftest import python_for_anyone, run_as, write
from .daemon import memctl
from .fake_providers import FakeProvider
from .harness import wait_answering

pytestmark = pytest.mark.slow

SECRET = "AKIAIOSFODNN7EXAMPLE"
NOTES = {
    "MEMORY.md": "# Decisions\n\n## Queue\nWe use RabbitMQ for the billing queue.\n\n## Database\n"
    "Postgres 16 for the ledger service.\n",
    "memory/2026-10-02.md": "# 2026-10-02\n\n- The heron dataset lives in the cold bucket.\n"
    f"- The deploy key is {SECRET} (rotate it monthly).\n",
    "memory/2026-10-15.md": "# 2026-10-15\n\n- Billing moved its cache from Redis to Memcached after the incident.\n"
    "- Alice prefers Postgres for the billing service.\n",
    "memory/projects/osprey.md": "# Osprey\n\nOsprey is the search rewrite; its index is rebuilt nightly at 02:00.\n",
}


def page_address(daemon: d.Daemon) -> tuple[str, int, str]:
    """(url, port, token) as `memctl ui --print` hands them over."""
    out = memctl(daemon, "ui", "--print")
    assert out.returncode == 0, out.stderr
    url = out.stdout.strip()
    parts = urllib.parse.urlsplit(url)
    assert parts.hostname == "127.0.0.1" and parts.fragment.startswith("token=")
    return url.split("#")[0], int(parts.port or 0), parts.fragment.removeprefix("token=")


def call(
    port: int,
    path: str,
    body: Any = None,
    *,
    token: str | None = None,
    method: str = "POST",
    host: str | None = None,
    headers: dict[str, str] | None = None,
    address: str = "127.0.0.1",
) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection(address, port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", host or f"127.0.0.1:{port}")
        sent = {"Content-Type": "application/json", **(headers or {})}
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        payload = b"" if body is None else json.dumps(body).encode()
        for name, value in sent.items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(payload)))
        connection.endheaders(payload)
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[d.Daemon]:
    daemon = d.start_with_notes(tmp_path_factory.mktemp("web"), NOTES)
    daemon.wait_idle()
    yield daemon
    d.cleanup(daemon)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as driver:
        yield driver


def opened(browser: Any, daemon: d.Daemon, route: str, page: str) -> None:
    """The page at `route`, the token handed over as `memctl ui` hands it (the first time)."""
    url, _, token = page_address(daemon)
    open_page(browser, f"{url}#token={token}", "search")
    open_page(browser, f"{url}#{route}", page)


# -- refusals ------------------------------------------------------------------------------------------------------


def test_the_token_file_is_private_and_made_anew_at_each_start(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "# Notes\n\n- one line\n")
    daemon = d.start(tmp_path, ws)
    try:
        _, port, token = page_address(daemon)
        token_file = daemon.data_dir / "ui.token"
        found = token_file.lstat()
        assert stat.S_ISREG(found.st_mode) and stat.S_IMODE(found.st_mode) == 0o600
        assert token_file.read_text().strip() == token
        assert call(port, "/api/ping", {}, token=token)[0] == 200
    finally:
        daemon.stop()
    planted = tmp_path / "elsewhere"
    planted.write_text("not a token\n")
    token_file.unlink()
    token_file.symlink_to(planted)  # a symlink at the path is replaced, never written through
    again = d.start(tmp_path, ws, socket=daemon.socket, data_dir=daemon.data_dir)
    try:
        _, port2, token2 = page_address(again)
        assert token2 != token and not token_file.is_symlink() and planted.read_text() == "not a token\n"
        assert call(port2, "/api/ping", {}, token=token)[0] == 401  # the last start's token no longer works
        assert call(port2, "/api/ping", {}, token=token2)[0] == 200
    finally:
        d.cleanup(again)


def test_a_request_without_the_token_is_refused(site: d.Daemon) -> None:
    _, port, token = page_address(site)
    for sent in (None, "", token[:-1] + ("A" if token[-1] != "A" else "B"), token + "x"):
        status, body = call(port, "/api/search", {"query": "billing"}, token=sent)
        assert status == 401 and b"billing" not in body.lower().replace(b"memctl", b"")
    assert call(port, "/api/schema", {}, token=None)[0] == 401
    assert call(port, "/api/events", {}, token=None)[0] == 401
    ok, body = call(port, "/api/search", {"query": "billing"}, token=token)
    assert ok == 200 and json.loads(body)["result"]["results"]


def test_a_foreign_host_or_origin_is_refused_even_with_the_token(site: d.Daemon) -> None:
    _, port, token = page_address(site)
    for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1:{port + 1}", "127.0.0.1", f"10.0.0.1:{port}"):
        assert call(port, "/api/status", {}, token=token, host=host)[0] == 403, host
        assert call(port, "/", method="GET", host=host)[0] == 403, host
    for origin in ("https://evil.example", f"http://evil.example:{port}", "null", f"http://127.0.0.1:{port + 1}"):
        status, _ = call(port, "/api/status", {}, token=token, headers={"Origin": origin})
        assert status == 403, origin
    cross = call(port, "/api/status", {}, token=token, headers={"Sec-Fetch-Site": "cross-site"})
    assert cross[0] == 403
    for host in (f"localhost:{port}", f"[::1]:{port}"):  # names that may lead a browser elsewhere
        assert call(port, "/api/status", {}, token=token, host=host)[0] == 403, host
    ours = f"127.0.0.1:{port}"
    assert call(port, "/api/status", {}, token=token, host=ours, headers={"Origin": f"http://{ours}"})[0] == 200


def test_data_only_by_post_with_json_and_never_with_cors(site: d.Daemon) -> None:
    _, port, token = page_address(site)
    assert call(port, "/api/status", None, token=token, method="GET")[0] == 404
    form = call(port, "/api/status", None, token=token, headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert form[0] == 415
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("OPTIONS", "/api/status", headers={"Origin": f"http://127.0.0.1:{port}"})
    answer = connection.getresponse()
    assert answer.status in (404, 405, 501) and answer.getheader("Access-Control-Allow-Origin") is None
    connection.close()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/")
    page = connection.getresponse()
    assert page.status == 200 and page.getheader("Access-Control-Allow-Origin") is None
    assert "frame-ancestors 'none'" in (page.getheader("Content-Security-Policy") or "")
    connection.close()
    bad = call(port, "/api/search", {"query": "x", "mode": "sideways"}, token=token)
    assert bad[0] == 400 and json.loads(bad[1])["error"]["code"] == "invalid_params"


def _other_addresses() -> list[str]:
    """This machine's addresses that are not 127.0.0.1: 127.0.0.2 (loopback, but not the one bound) and every
    interface's own."""
    found = {"127.0.0.2"}
    out = subprocess.run(["ip", "-o", "addr", "show"], capture_output=True, text=True, check=False).stdout
    for line in out.splitlines():
        fields = line.split()
        if len(fields) > 3 and fields[2] in ("inet", "inet6"):
            address = fields[3].split("/")[0]
            if address not in ("127.0.0.1", "::1") and not address.startswith("fe80"):
                found.add(address)
    return sorted(found)


def test_the_page_is_not_reachable_on_another_address(site: d.Daemon) -> None:
    _, port, _ = page_address(site)
    for address in _other_addresses():
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.settimeout(3)
            assert probe.connect_ex((address, port)) != 0, f"the page answered on {address}"
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(3)
        assert probe.connect_ex(("127.0.0.1", port)) == 0


def test_the_page_is_off_with_one_setting(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws / "MEMORY.md", "# Notes\n")
    daemon = d.start(tmp_path, ws, extra="ui = false")
    try:
        info = daemon.client().ping()
        assert info["ui"]["url"] is None and "off" in info["ui"]["error"]
        out = memctl(daemon, "ui", "--print")
        assert out.returncode == 1 and "no web page" in out.stderr
        assert not (daemon.data_dir / "ui.token").exists()
    finally:
        d.cleanup(daemon)


def test_a_taken_port_leaves_the_daemon_serving_and_says_why(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        ws = tmp_path / "ws"
        write(ws / "MEMORY.md", "# Notes\n\n- the taken port\n")
        daemon = d.start(tmp_path, ws, extra=f"ui_port = {port}")
        try:
            info = daemon.client().ping()
            assert info["ui"]["url"] is None and str(port) in info["ui"]["error"]
            assert daemon.client().search("taken port").results
        finally:
            d.cleanup(daemon)


# -- the pages, in chromium ----------------------------------------------------------------------------------------


def _texts(browser: Any, css: str, attribute: str | None = None) -> list[str]:
    found = browser.find_elements("css selector", css)
    return [(e.get_attribute(attribute) if attribute else e.text) or "" for e in found]


def test_search_shows_what_memctl_search_finds_in_the_same_order(site: d.Daemon, browser: Any) -> None:
    for options, route in (
        ([], "/search?query=billing+cache"),
        (["-n", "2", "--mode", "keyword"], "/search?query=billing+cache&max_results=2&mode=keyword"),
        (["--source", "memory", "--path", "memory/"], "/search?query=Postgres&sources=memory&path=memory%2F"),
    ):
        query = urllib.parse.parse_qs(route.split("?")[1])["query"][0]
        expected = json.loads(memctl(site, "--json", "search", query, *options).stdout)["results"]
        opened(browser, site, route, "search")
        shown = _texts(browser, "li.hit", "data-citation")
        assert shown == [hit["citation"] for hit in expected] and shown, route
    marks = [m.text.lower() for m in browser.find_elements("css selector", "li.hit mark")]
    assert "postgres" in marks  # the matched words are highlighted
    chart = browser.find_element("css selector", "li.hit .chart").text.split("\n")
    explained = json.loads(
        memctl(site, "--json", "search", "Postgres", "--source", "memory", "--path", "memory/", "--explain").stdout
    )
    first = explained["results"][0]["explain"]
    shown = dict(zip(chart[0::2], chart[1::2], strict=False))
    assert shown["keyword"] == f"{first['text_score']:.3f}" and shown["final"] == f"{first['final']:.3f}"
    assert shown["fusion"] == f"{first['fused']:.3f}" and shown["decay"] == f"{first['decay']:.3f}"


def test_a_note_opens_at_its_citation_with_its_chunks_marked(site: d.Daemon, browser: Any) -> None:
    opened(browser, site, "/search?query=RabbitMQ+queue", "search")
    link = browser.find_element("css selector", "li.hit a.cite")
    citation = link.text
    path, lines = citation.split("#L")
    first, last = (int(n.lstrip("L")) for n in lines.split("-"))
    link.click()
    wait_for(lambda: browser.find_element("tag name", "body").get_attribute("data-ready") == "note", what="note")
    cited = [int(x) for x in _texts(browser, ".ln.cited", "data-line")]
    assert cited == list(range(first, last + 1)) and path == "MEMORY.md"
    chunks = json.loads(memctl(site, "--json", "notes", "--path", path).stdout)["chunks"]
    starts = [int(x) for x in _texts(browser, ".ln.chunk-start", "data-line")]
    assert starts == [c["start_line"] for c in chunks] and len(starts) >= 2
    assert "We use RabbitMQ for the billing queue." in browser.find_element("css selector", "pre.lines").text


def test_the_timeline_shows_the_notes_written_today(site: d.Daemon, browser: Any) -> None:
    written = json.loads(memctl(site, "--json", "write", "The osprey rollout starts on Monday.").stdout)
    today = written["path"].removeprefix("memory/").removesuffix(".md")
    assert today == dt.date.today().isoformat()
    opened(browser, site, "/notes", "notes")
    assert f"memory/{today}.md" in _texts(browser, "#daylist a")
    day = browser.find_element("css selector", f'#calendar .day[data-day="{today}"]')
    written_today = json.loads(memctl(site, "--json", "notes", "--day", today).stdout)["total"]
    assert "today" in (day.get_attribute("class") or "") and day.find_element("css selector", ".n").text == str(
        written_today
    )
    assert _texts(browser, "#main .tree > a") == ["MEMORY.md"]  # the tree's first level: MEMORY.md and memory/
    for folder, files in (
        ("memory", ["2026-10-02.md", "2026-10-15.md", f"{today}.md"]),
        ("memory/projects", ["osprey.md"]),
    ):
        browser.find_element("css selector", f'details[data-folder="{folder}"] > summary').click()
        inside = f'details[data-folder="{folder}"] > .inner > .tree > a'
        assert wait_for(lambda: _texts(browser, inside), what=folder) == files  # noqa: B023
    assert "(1)" in browser.find_element("css selector", 'details[data-folder="memory/projects"] > summary').text
    opened(browser, site, "/notes?month=2026-10&day=2026-10-15", "notes")
    assert _texts(browser, "#daylist a") == ["memory/2026-10-15.md"]


def test_the_recall_log_shows_the_block_a_hook_put_before_a_prompt(
    site: d.Daemon, browser: Any, tmp_path: Path
) -> None:
    prompt = "Which database does Alice prefer for the billing service?"
    hook_input = {
        "session_id": "web-1",
        "transcript_path": str(tmp_path / "web-1.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    out = memctl(site, "hook", "claude-code", "UserPromptSubmit", stdin=json.dumps(hook_input))
    assert out.returncode == 0, out.stderr
    block = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    injected = sorted({word.strip("()[],.") for word in block.split() if "#L" in word and ".md" in word})
    assert injected, block
    opened(browser, site, "/recall", "recall")
    session = next(s for s in browser.find_elements("css selector", ".session") if "web-1" in s.text)
    assert prompt in session.text
    shown = sorted(a.text for a in session.find_elements("css selector", "a.cite"))
    assert shown == injected
    assert all(cell.text for cell in session.find_elements("css selector", "td:nth-child(2)"))


def _recalled(site: d.Daemon, session: str, prompt: str) -> None:
    hook = {"session_id": session, "prompt": prompt}
    out = memctl(site, "hook", "claude-code", "UserPromptSubmit", stdin=json.dumps(hook))
    assert out.returncode == 0 and out.stdout, out.stderr


def _memory_row(browser: Any, day: str) -> Any:
    return next(r for r in browser.find_elements("css selector", ".session tr") if day in r.text)


def test_a_memory_shown_in_the_recall_log_can_be_forgotten_there(site: d.Daemon, browser: Any) -> None:
    _recalled(site, "web-2", "where does the heron dataset live?")
    opened(browser, site, "/recall?session=web-2", "recall")
    row = _memory_row(browser, "2026-10-02")
    citation = row.find_element("css selector", "a.cite").text
    row.find_element("css selector", "button.shown").click()  # what the agent was shown, from the note
    assert "cold bucket" in wait_for(lambda: browser.find_element("css selector", "tr.shown-text").text)
    row.find_element("css selector", "button.forget").click()
    wait_for(lambda: browser.find_element("id", "confirm-forget")).click()
    said = wait_for(lambda: browser.find_element("id", "notice").text, what="the notice")
    assert said.startswith(f"Forgotten: {citation}")
    gone = lambda: "cold bucket" not in memctl(site, "--json", "search", "heron dataset cold bucket").stdout  # noqa: E731
    wait_for(gone, what="the forgotten line out of search")
    changes = json.loads(memctl(site, "--json", "changes").stdout)["changes"]
    assert changes[0]["kind"] == "forget" and changes[0]["citation"] == citation
    assert memctl(site, "undo").returncode == 0


def test_an_edit_from_the_recall_log_never_overwrites_a_newer_save(site: d.Daemon, browser: Any) -> None:
    _recalled(site, "web-3", "which cache does billing use now?")
    opened(browser, site, "/recall?session=web-3", "recall")
    _memory_row(browser, "2026-10-15").find_element("css selector", "button.edit").click()
    area = wait_for(lambda: browser.find_element("id", "edit-text"))
    note = site.workspace / "memory" / "2026-10-15.md"
    saved = note.read_text().replace("after the incident", "after the March incident")
    note.write_text(saved)  # an editor saves while the dialog is open
    area.clear()
    area.send_keys("# 2026-10-15\n\n- Billing's cache is Memcached.")
    browser.find_element("id", "confirm-edit").click()
    said = wait_for(lambda: browser.find_element("id", "dialog-said").text, what="the conflict")
    assert "changed since you opened" in said and "March incident" in said
    assert note.read_text() == saved  # nothing written over the editor's save; the dialog keeps the user's text
    assert "Memcached." in browser.find_element("id", "edit-text").get_attribute("value")
    browser.find_element("id", "confirm-edit").click()  # a second save, knowing what is there now, goes through
    wait_for(lambda: browser.find_element("id", "notice").text.startswith("Saved:"), what="the save")
    assert "Billing's cache is Memcached." in note.read_text() and "March incident" not in note.read_text()
    assert memctl(site, "undo").returncode == 0 and note.read_text() == saved


def test_the_search_form_sends_every_option_it_shows(site: d.Daemon, browser: Any) -> None:
    from selenium.webdriver.support.ui import Select

    opened(browser, site, "/search", "search")
    form = browser.find_element("id", "search-form")
    names = {e.get_attribute("name") for e in form.find_elements("css selector", "[name]")}
    schema = json.loads(call(page_address(site)[1], "/api/schema", {}, token=page_address(site)[2])[1])["result"]
    assert names == {p["name"] for p in schema["search"]["params"]} - {"agent"}  # every option but the picker's
    form.find_element("name", "query").send_keys("billing cache")
    form.find_element("name", "max_results").send_keys("2")
    Select(form.find_element("name", "mode")).select_by_value("keyword")
    Select(form.find_element("name", "decay")).select_by_value("false")
    for box in form.find_elements("css selector", 'input[name="sources"]'):
        box.click()  # both sources
    form.find_element("css selector", "button[type=submit]").click()
    wait_for(lambda: "mode=keyword" in browser.current_url and browser.find_elements("css selector", "li.hit"))
    route = urllib.parse.parse_qs(browser.current_url.split("?", 1)[1])
    assert route["sources"] == ["memory", "sessions"] and route["decay"] == ["false"] and route["max_results"] == ["2"]
    expected = memctl(
        site,
        "--json",
        "search",
        "billing cache",
        "-n",
        "2",
        "--mode",
        "keyword",
        "--source",
        "memory",
        "--source",
        "sessions",
    )
    shown = wait_for(lambda: _texts(browser, "li.hit", "data-citation"))
    assert shown == [hit["citation"] for hit in json.loads(expected.stdout)["results"]]
    opened(browser, site, "/search?" + browser.current_url.split("?", 1)[1], "search")  # the URL draws the same form
    form = browser.find_element("id", "search-form")
    ticked = [
        b.get_attribute("value") for b in form.find_elements("css selector", 'input[name="sources"]') if b.is_selected()
    ]
    assert (
        ticked == ["memory", "sessions"]
        and Select(form.find_element("name", "decay")).first_selected_option.text == "off"
    )


def test_a_planted_secret_appears_on_no_page(site: d.Daemon, browser: Any) -> None:
    _, port, token = page_address(site)
    for method, params in (
        ("search", {"query": "deploy key rotate"}),
        ("get", {"path": "memory/2026-10-02.md"}),
        ("notes", {"path": "memory/2026-10-02.md"}),
        ("recall_log", {"skipped": True}),
        ("status", {}),
    ):
        status, body = call(port, f"/api/{method}", params, token=token)
        assert status == 200 and SECRET.encode() not in body, method
    for route, page in (
        ("/search?query=deploy+key+rotate", "search"),
        ("/note?path=memory%2F2026-10-02.md&from=4&to=4", "note"),
        ("/notes?day=2026-10-02&month=2026-10", "notes"),
        ("/recall", "recall"),
        ("/status", "status"),
    ):
        opened(browser, site, route, page)
        assert SECRET not in browser.page_source, route
        if page in ("search", "note"):
            assert "it monthly" in browser.page_source, route  # the line is shown, its secret is not


def test_the_status_bar_moves_during_a_first_index(tmp_path: Path, browser: Any) -> None:
    provider = FakeProvider("openai", dims=32, seconds_per_request=0.6)
    ws = tmp_path / "ws"
    for day in range(1, 321):
        write(
            ws / "memory" / f"2026-09-{day % 30 + 1:02d}-{day}.md", f"# Day {day}\n\n- entry {day} about item {day}\n"
        )
    extra = (
        f'[[agents]]\nid = "main"\nworkspace = "{ws}"\n[agents.embedding]\nprovider = "openai"\n'
        f'model = "text-embedding-3-small"\nbase_url = "{provider.base_url}"\napi_key = "sk-test"\nbatch_size = 2\n'
    )
    daemon = d.start(tmp_path, ws, extra=extra, agent=False, wait=False)
    try:
        wait_answering(daemon)
        opened(browser, daemon, "/status", "status")
        seen: list[tuple[int, int]] = []

        def sample() -> bool:
            bar = browser.find_element("id", "embed-main")
            seen.append((int(bar.get_attribute("aria-valuenow")), int(bar.get_attribute("aria-valuemax"))))
            return seen[-1][1] > 0 and seen[-1][0] >= seen[-1][1]

        wait_for(sample, timeout=180, what="the first index's end")
        moving = sorted({done for done, total in seen if 0 < done < total})
        assert len(moving) >= 2, sorted(set(seen))  # drawn part way more than once, without a reload
        assert [done for done, _ in seen] == sorted(done for done, _ in seen)  # and only ever forward
        assert browser.find_element("id", "live").text == "●"
    finally:
        d.cleanup(daemon)
        provider.close()


# -- hardening: other users, malformed bodies, slow requests, the browser's command line ----------------------------

OTHER_USER_PROBE = """
import socket, sys
port, token = int(sys.argv[1]), sys.argv[2]
request = (f"POST /api/status HTTP/1.1\\r\\nHost: 127.0.0.1:{port}\\r\\nAuthorization: Bearer {token}\\r\\n"
           "Content-Type: application/json\\r\\nContent-Length: 2\\r\\n\\r\\n{}").encode()
for family, address in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::ffff:127.0.0.1")):
    with socket.socket(family) as s:
        s.settimeout(5)
        s.connect((address, port))
        try:
            s.sendall(request)
            answer = s.recv(100)
        except OSError:
            answer = b""
        print(family.name, answer[:12].decode(errors="replace") or "closed")
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a probe as another user")
def test_another_users_connection_is_closed_even_with_the_token(site: d.Daemon) -> None:
    _, port, token = page_address(site)
    probe = run_as(65534, 65534, [python_for_anyone(), "-c", OTHER_USER_PROBE, str(port), token])
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.split() == ["AF_INET", "closed", "AF_INET6", "closed"], probe.stdout
    assert call(port, "/api/status", {}, token=token)[0] == 200  # this user's own still is answered


def _raw(port: int, data: bytes, wait: float = 5.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        s.sendall(data)
        got = b""
        while chunk := s.recv(65536):
            got += chunk
    return got


def test_a_chunked_body_or_two_lengths_are_refused_and_the_connection_closed(site: d.Daemon) -> None:
    _, port, token = page_address(site)
    head = f"POST /api/search HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
    head += "Content-Type: application/json\r\n"
    smuggled = f"POST /api/status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n"
    chunked = (head + "Transfer-Encoding: chunked\r\n\r\n" + f"{len(smuggled):x}\r\n{smuggled}\r\n0\r\n\r\n").encode()
    answer = _raw(port, chunked)
    assert answer.startswith(b"HTTP/1.1 400") and answer.count(b"HTTP/1.1") == 1  # nothing read as a 2nd request
    twice = (head + "Content-Length: 2\r\nContent-Length: 30\r\n\r\n{}").encode()
    assert _raw(port, twice).startswith(b"HTTP/1.1 400")
    odd = (head + "Content-Length: 0_2\r\n\r\n{}").encode()
    assert _raw(port, odd).startswith(b"HTTP/1.1 400")
    deep = json.dumps({"query": "x"})[:-1] + ', "nested": ' + "[" * 100_000 + "]" * 100_000 + "}"
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request(
        "POST",
        "/api/search",
        body=deep.encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    answer_deep = connection.getresponse()
    assert answer_deep.status == 400 and json.loads(answer_deep.read())["error"]["code"] == "invalid_params"
    connection.close()


def test_a_request_sent_a_byte_at_a_time_is_cut_off(site: d.Daemon) -> None:
    _, port, _ = page_address(site)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        started = time.monotonic()
        closed_after = None
        for byte in b"POST /api/status HTTP/1.1\r\nHost: 127.0.0.1:" + str(port).encode() + b"\r\nX-Slow: " + b"a" * 60:
            try:
                s.sendall(bytes([byte]))
                time.sleep(0.4)  # within any one read's timeout
                if s.recv(1, socket.MSG_DONTWAIT | socket.MSG_PEEK) == b"":
                    closed_after = time.monotonic() - started
                    break
            except BlockingIOError:
                continue
            except OSError:
                closed_after = time.monotonic() - started
                break
    assert closed_after is not None and closed_after < 25, "a trickled request kept its connection"


def test_memctl_ui_never_puts_the_token_on_the_browsers_command_line(site: d.Daemon, tmp_path: Path) -> None:
    record = tmp_path / "argv"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {record}\n')
    browser.chmod(0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORYD_") and k != "DISPLAY"}
    env.update(MEMORYD_SOCKET=str(site.socket), MEMORYD_DATA_DIR=str(site.data_dir), BROWSER=f"{browser} %s")
    out = subprocess.run(
        [sys.executable, "-m", "memoryd_client.memctl", "ui"], capture_output=True, text=True, env=env, timeout=60
    )
    assert out.returncode == 0, out.stderr
    url, _, token = page_address(site)
    argv = wait_for(lambda: record.exists() and record.read_text(), what="the browser's command line")
    assert token not in argv and argv.strip() == (site.data_dir / "ui-open.html").as_uri()
    opener = site.data_dir / "ui-open.html"
    assert stat.S_IMODE(opener.stat().st_mode) == 0o600 and f"{url}#token={token}" in opener.read_text()
