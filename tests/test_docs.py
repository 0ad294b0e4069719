"""The docs for each reader: the README stays a user's page (short: detail lives under docs/), and no relative link
in the user's and the operator's pages points at a file, or a heading, that is not there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_LIMIT = 15_000  # bytes: what it takes to install and use memoryd; the rest is linked
CHECKED = ["README.md", "client/README.md", "docs/configuration.md", "docs/postgresql.md", "docs/integrations.md"]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCED = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.M)


def relative_links(text: str) -> list[str]:
    """The targets of Markdown links and images within the checkout or the page (code holds none)."""
    targets = LINK.findall(CODE.sub("", FENCED.sub("", text)))
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t)]


def anchors(text: str) -> set[str]:
    """The fragments GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    found = set()
    for heading in HEADING.findall(FENCED.sub("", text)):
        plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").lower()
        found.add(re.sub(r"[^\w\- ]", "", plain).replace(" ", "-"))
    return found


def test_the_readme_is_short() -> None:
    size = len((ROOT / "README.md").read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes (at most {README_LIMIT}): move detail to docs/"


@pytest.mark.parametrize("doc", CHECKED)
def test_relative_links_point_at_files_and_headings(doc: str) -> None:
    path = ROOT / doc
    broken = []
    for target in relative_links(path.read_text(encoding="utf-8")):
        file, _, fragment = target.partition("#")
        linked = (path.parent / file) if file else path
        headings = anchors(linked.read_text(encoding="utf-8")) if linked.suffix == ".md" and linked.exists() else set()
        if not linked.exists() or (fragment and linked.suffix == ".md" and fragment not in headings):
            broken.append(target)
    assert not broken, f"{doc} links to what is not there: {broken}"


def test_the_link_finder_sees_links_and_skips_code() -> None:
    text = "[a](docs/x.md) [b](https://e.org) [c](#top) `[d](no.md)` ![i](img.png) [e](../y.md#part)\n"
    text += "```\n[f](z.md)\n```\n"
    assert relative_links(text) == ["docs/x.md", "#top", "img.png", "../y.md#part"]


def test_headings_become_githubs_anchors() -> None:
    text = "# memoryd\n## In the agent's loop\n### With pip, pipx or uv\n## Moving an index: `memoryd store migrate`\n"
    text += "```sh\n# not a heading\n```\n"
    assert anchors(text) == {
        "memoryd",
        "in-the-agents-loop",
        "with-pip-pipx-or-uv",
        "moving-an-index-memoryd-store-migrate",
    }
