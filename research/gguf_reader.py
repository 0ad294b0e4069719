"""How the local model's tokenizer is read from its GGUF file: memoryd's own key reader against the `gguf`
package's GGUFReader (time, and resident memory added), on the prepared default model.

python -m research.gguf_reader [MODEL.gguf]   (each reader runs in a process of its own)
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from memoryd.config import default_data_dir, default_model_path


def _rss_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 2**20


def run_one(reader: str, model: Path) -> dict[str, float]:
    from memoryd.embeddings.unigram import _KEYS, KEY_PREFIX

    keys = {KEY_PREFIX + name for name in _KEYS}
    before, started = _rss_mb(), time.perf_counter()
    if reader == "memoryd":
        from memoryd.embeddings.models.gguf_meta import read_keys

        found = read_keys(model, keys)
    else:
        import gguf

        fields = gguf.GGUFReader(model).fields
        found = {key: fields[key].contents() for key in keys if key in fields}
    return {
        "reader": reader,
        "keys": len(found),
        "seconds": round(time.perf_counter() - started, 2),
        "rss_added_mb": round(_rss_mb() - before, 1),
    }


def main(argv: list[str] | None = None) -> list[dict[str, float]]:
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 2 and args[0] in ("memoryd", "gguf"):
        print(json.dumps(run_one(args[0], Path(args[1]))))
        return []
    model = Path(args[0]) if args else default_model_path(default_data_dir())
    out = []
    for reader in ("memoryd", "gguf"):
        done = subprocess.run([sys.executable, "-m", "research.gguf_reader", reader, str(model)], capture_output=True)
        out.append(json.loads(done.stdout))
        print(json.dumps(out[-1]), flush=True)
    return out


if __name__ == "__main__":
    main()
