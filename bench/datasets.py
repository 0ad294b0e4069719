"""Load the shared retrieval data sets and lay them out as an agent's Markdown memory."""

from __future__ import annotations

import csv
import json
import os
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SHARED = Path(os.environ.get("MEMORYD_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))


@dataclass
class Dataset:
    name: str
    docs: dict[str, tuple[str, str]]  # id -> (title, text)
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def _jsonl(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def load_scifact(split: str = "test") -> Dataset:
    root = SHARED / "data" / "scifact"
    docs = {d["_id"]: (d.get("title", ""), d["text"]) for d in _jsonl(root / "corpus.jsonl")}
    qrels: dict[str, dict[str, int]] = {}
    with (root / "qrels" / f"{split}.tsv").open(encoding="utf-8") as fh:
        reader = csv.reader(fh, delimiter="\t")
        next(reader)
        for qid, did, score in reader:
            qrels.setdefault(qid, {})[did] = int(score)
    queries = {q["_id"]: q["text"] for q in _jsonl(root / "queries.jsonl") if q["_id"] in qrels}
    return Dataset("scifact", docs, queries, qrels)


def strip_tones(text: str) -> str:
    """Vietnamese as typed without tone marks or diacritics: "thanh toán" -> "thanh toan", "đ" -> "d"."""
    decomposed = unicodedata.normalize("NFD", text.replace("đ", "d").replace("Đ", "D"))
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if unicodedata.category(c) != "Mn"))


def load_xquad(lang: str) -> Dataset:
    """XQuAD in one language; `vi-notone`: Vietnamese paragraphs, questions typed without tone marks."""
    notone = lang.endswith("-notone")
    lang = lang.removesuffix("-notone")
    data = json.loads((SHARED / "data" / "xquad" / f"xquad.{lang}.json").read_text(encoding="utf-8"))
    docs: dict[str, tuple[str, str]] = {}
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    for article in data["data"]:
        for p_index, paragraph in enumerate(article["paragraphs"]):
            doc_id = f"{article['title']}-{p_index}".replace("/", "_").replace(" ", "_")
            docs[doc_id] = (article["title"], paragraph["context"])
            for qa in paragraph["qas"]:
                queries[qa["id"]] = strip_tones(qa["question"]) if notone else qa["question"]
                qrels[qa["id"]] = {doc_id: 1}
    return Dataset(f"xquad-{lang}", docs, queries, qrels)


def write_workspace(dataset: Dataset, workspace: Path) -> dict[str, str]:
    """One Markdown note per document under memory/; returns display path -> doc id."""
    folder = workspace / "memory" / dataset.name
    folder.mkdir(parents=True, exist_ok=True)
    mapping: dict[str, str] = {}
    for index, (doc_id, (title, text)) in enumerate(dataset.docs.items()):
        name = f"d{index:05d}.md"
        body = f"# {title}\n\n{text}\n" if title else f"{text}\n"
        (folder / name).write_text(body, encoding="utf-8")
        mapping[f"memory/{dataset.name}/{name}"] = doc_id
    return mapping


def dataset_workspace(dataset: Dataset, root: Path) -> tuple[Path, dict[str, str]]:
    """The dataset's workspace under root (written once, reused after) and display path -> doc id."""
    workspace = root / dataset.name / "workspace"
    if (workspace / "memory").exists():
        return workspace, {f"memory/{dataset.name}/d{i:05d}.md": d for i, d in enumerate(dataset.docs)}
    return workspace, write_workspace(dataset, workspace)
