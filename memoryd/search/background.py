"""A background for the vector side of a small index. Fusion scales the vector side min-max over its candidate
pool, and reads its confidence off the cosines of the whole index: in an index of two notes the pool is those two,
so the second scores 0 however close it came ("billing keeps its sessions in Memcached" under "billing: we use
Redis as the cache", asked which cache billing uses) and falls under min_score, and two cosines make no
distribution. A search of fewer chunks than the pool (a small index, or a filter that leaves few) is made as if
they were among everyday sentences in the languages people write, the ones nearest the query, as many as fill the
pool: the nearest is the floor the vector side is scaled from (or the farthest note, if lower), and its span is at
least fusion.BACKGROUND_WIDTH standard deviations of that distribution, so notes that differ from the floor by
noise are not stretched over the whole scale (python -m bench small chose both, docs/design.md, "A small
memory")."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import replace

import numpy as np
import structlog

from memoryd.embeddings.base import Embedder, EmbeddingError, Interrupted, clean_vectors
from memoryd.store.vectors import VectorScan

# Everyday sentences in the languages people keep notes in, none about work a memory holds.
SENTENCES = (
    "The bakery on the corner sells fresh bread every morning.",
    "It rained all weekend, so the picnic moved indoors.",
    "My grandmother grows tomatoes and basil in her garden.",
    "The football match went to extra time and ended in a draw.",
    "We watched the sunset from the top of the hill.",
    "The cat sleeps on the windowsill in the afternoon.",
    "The train to the coast leaves at half past nine.",
    "She practises the violin for an hour before dinner.",
    "Hôm nay trời nắng đẹp, chúng tôi đi dạo công viên.",
    "Mẹ tôi nấu phở bò rất ngon vào sáng chủ nhật.",
    "Con mèo nhà hàng xóm hay leo lên mái nhà.",
    "Mùa hè năm ngoái cả gia đình đi biển Nha Trang.",
    "Anh ấy thích đọc truyện trinh thám trước khi ngủ.",
    "Chợ đêm đông người bán hoa quả và đồ lưu niệm.",
    "今天下午下了一场大雨，街上的人很少。",
    "奶奶每天早上都去公园打太极拳。",
    "这家小饭馆的饺子特别好吃。",
    "周末我们一家人去山上看红叶。",
    "他小时候最喜欢在河边钓鱼。",
    "图书馆里很安静，大家都在看书。",
    "วันนี้อากาศร้อนมาก เราจึงไปว่ายน้ำที่ทะเล",
    "คุณยายทำแกงเขียวหวานอร่อยที่สุดในหมู่บ้าน",
    "แมวของฉันชอบนอนบนโซฟาตอนบ่าย",
    "ตลาดน้ำมีผลไม้สดและขนมไทยมากมาย",
    "เด็กๆ เล่นฟุตบอลกันที่สนามหลังโรงเรียน",
    "เราไปเที่ยวเชียงใหม่ช่วงฤดูหนาว",
    "El mercado del pueblo abre los sábados por la mañana.",
    "Mi hermano aprendió a nadar el verano pasado.",
    "La sopa de la abuela lleva garbanzos y zanahoria.",
    "Le jardin public est couvert de feuilles en automne.",
    "Nous avons pique-niqué au bord du lac dimanche.",
    "Der Bäcker backt jeden Morgen frische Brötchen.",
    "Im Winter fahren wir gern mit dem Schlitten den Berg hinunter.",
    "Os pássaros cantam cedo na praça da cidade.",
    "毎朝、近所の公園で犬の散歩をしています。",
    "夏祭りで花火を見ながらかき氷を食べた。",
    "주말에 친구들과 한강에서 자전거를 탔다.",
    "할머니가 만든 김치찌개는 정말 맛있다.",
    "Летом мы собирали грибы в лесу у реки.",
    "Кошка спит на подоконнике весь день.",
)

log = structlog.get_logger(__name__)
RETRY_SECONDS = 60.0  # after a provider failed to embed them: searches go on without them until then

_lock = threading.Lock()
_held: dict[tuple[str, str, str, int], np.ndarray] = {}
_failed: dict[tuple[str, str, str, int], float] = {}


def background_vectors(embedder: Embedder) -> np.ndarray | None:
    """The sentences' vectors for the provider that answers now (a chain's active member: a search never moves a
    chain to its fallback), made once a process (about half a second with the local model) and never written to the
    store, which a search does not write; None when the provider cannot make them, and for RETRY_SECONDS after."""
    inner = embedder.current
    ident = (inner.provider, inner.model, inner.key_fingerprint, inner.dims)
    with _lock:
        held = _held.get(ident)
        if held is not None or time.monotonic() - _failed.get(ident, -math.inf) < RETRY_SECONDS:
            return held
    try:
        matrix = clean_vectors(inner.embed_documents(list(SENTENCES), urgent=True), inner.dims)
    except (EmbeddingError, Interrupted, ValueError) as exc:  # failing or stopping, or vectors of another size
        with _lock:
            _failed[ident] = time.monotonic()
        log.info("no background for small indexes", provider=inner.provider, error=str(exc))
        return None
    with _lock:
        _held[ident] = matrix
    return matrix


def padded(scan: VectorScan, background: np.ndarray, query_vector: np.ndarray, pool: int) -> VectorScan:
    """The scan of fewer chunks than `pool` (a small index, or a filter that leaves few), filled up to it with the
    background's cosines nearest the query. They join the distribution its confidence is read from, and the nearest
    is the floor the vector side is scaled from, unless a candidate is lower still (fusion: a note scores there as
    far as it is nearer the question than any sentence about nothing, or than the farthest note)."""
    wanted = min(pool - scan.count, len(background))
    if wanted <= 0 or scan.scales or background.shape[1] != query_vector.shape[0]:
        return scan  # a scan mapped per language (store.languages) is on a scale the raw cosines are not
    cosines = np.sort(background @ query_vector)[::-1][:wanted].astype(np.float64)
    count = scan.count + wanted
    total = scan.mean * scan.count + float(cosines.sum())
    squares = (scan.std**2 + scan.mean**2) * scan.count + float((cosines**2).sum())
    mean = total / count
    std = math.sqrt(max(squares / count - mean**2, 0.0))
    return replace(scan, mean=mean, std=std, count=count, floor=float(cosines[0]))
