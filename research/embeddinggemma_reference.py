"""Make the reference vectors `memoryd model prepare --model embeddinggemma-300m` checks its GGUF against.

Google's own pipeline (sentence-transformers over torch, fp32) embeds fixed texts (queries and documents in
English, Vietnamese, Chinese and Thai, code, and one long document near the 512-token window) with the model's
prompts; the vectors (float16) and the tokenizer's ids go to
memoryd/embeddings/models/embeddinggemma-300m.reference.json. torch is not a memoryd dependency: run this in a
separate environment that has it (`pip install torch==2.13.0 sentence-transformers`), on the model's folder as
memoryd assembles it (`memoryd.embeddings.models.prepare.fetch_source(Path(DIR), "embeddinggemma-300m")`):

    python -m research.embeddinggemma_reference SOURCE_DIR
"""

from __future__ import annotations

import argparse
import base64
import json
from pathlib import Path

import numpy as np

QUERY_PREFIX = "task: search result | query: "
DOCUMENT_PREFIX = "title: none | text: "
LONG = " ".join(["The ledger service keeps every posting in PostgreSQL and replays the journal at start-up."] * 26)
TEXTS = [
    ("query", "Which cache does billing use now?"),
    (
        "document",
        "2025-10-28: Switched the billing cache from Redis to Memcached after the incident review; "
        "the session TTL stays at 30 minutes.",
    ),
    ("query", "hệ thống thanh toán đang dùng bộ nhớ đệm nào?"),
    (
        "document",
        "Đã chuyển bộ nhớ đệm của hệ thống thanh toán từ Redis sang Memcached sau buổi rà soát sự cố tuần trước.",
    ),
    ("document", "上个月我们把结算服务的缓存从Redis换成了Memcached，会话过期时间仍是三十分钟。"),
    ("document", "เดือนที่แล้วเราย้ายแคชของระบบชำระเงินจาก Redis ไปใช้ Memcached หลังจากทบทวนเหตุการณ์"),
    ("query", "memoryd.store.sqlite.SqliteStore.upsert_chunks raises IntegrityError"),
    (
        "document",
        "def parse_citation(text: str) -> Citation:\n    path, _, lines = text.partition('#L')\n"
        "    start, _, end = lines.partition('-L')\n    return Citation(path, int(start), int(end or start))",
    ),
    ("document", LONG),
]
OUT = Path("memoryd/embeddings/models/embeddinggemma-300m.reference.json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="the sentence-transformers folder")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(args.source), device="cpu")
    prompted = [(QUERY_PREFIX if role == "query" else DOCUMENT_PREFIX) + text for role, text in TEXTS]
    vectors = model.encode(prompted, normalize_embeddings=True, batch_size=1, convert_to_numpy=True)
    rows = [
        {
            "role": role,
            "text": text,
            "ids": model.tokenizer(full)["input_ids"],
            "vector": base64.b64encode(np.asarray(vector, dtype="<f2").tobytes()).decode(),
        }
        for (role, text), full, vector in zip(TEXTS, prompted, vectors, strict=True)
    ]
    about = (
        "Vectors of google/embeddinggemma-300m (sentence-transformers, fp32, CPU) for fixed texts with the model's "
        "own prompts, float16 little-endian in base64; `ids` are its tokenizer's ids for the prompted text. Made by "
        "research/embeddinggemma_reference.py; memoryd model prepare checks a converted GGUF against them."
    )
    document = {"about": about, "query_prefix": QUERY_PREFIX, "document_prefix": DOCUMENT_PREFIX, "texts": rows}
    args.out.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(rows)} reference vectors to {args.out}")


if __name__ == "__main__":
    main()
