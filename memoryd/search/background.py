"""A background for the vector side of a small index. Fusion scales the vector side min-max over its candidate
pool, and reads its confidence off the cosines of the whole index: in an index of two notes the pool is those two,
so the second scores 0 however close it came ("billing keeps its sessions in Memcached" under "billing: we use
Redis as the cache", asked which cache billing uses) and falls under min_score, and two cosines make no
distribution. An index with fewer chunks than the pool is searched as if it also held everyday sentences in the
languages people write, the ones nearest the query, as many as fill the pool: the nearest is the floor the vector
side is scaled from, and its span is at least fusion.BACKGROUND_WIDTH standard deviations of that distribution, so
notes that differ from the floor by noise are not stretched over the whole scale (python -m bench small chose
both, docs/design.md, "A small memory")."""

from __future__ import annotations

import hashlib
import math
import threading
from dataclasses import replace

import numpy as np
import structlog

from memoryd.embeddings.base import Embedder, EmbeddingError, Interrupted, clean_vectors
from memoryd.store.interface import MemoryStore
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
_lock = threading.Lock()
_held: dict[tuple[str, str, str, int], np.ndarray] = {}


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def background_vectors(store: MemoryStore, embedder: Embedder) -> np.ndarray | None:
    """The sentences' vectors for this embedder, made once a process (about half a second with the local model)
    and kept in the index's embedding cache across restarts; None when the embedder cannot make them now."""
    ident = (embedder.provider, embedder.model, embedder.key_fingerprint, embedder.dims)
    with _lock:
        held = _held.get(ident)
    if held is not None:
        return held
    keys = [_key(text) for text in SENTENCES]
    try:
        found = store.cache_get(embedder.provider, embedder.model, embedder.key_fingerprint, keys)
        missing = [i for i, key in enumerate(keys) if key not in found]
        if missing:
            made = embedder.embed_documents([SENTENCES[i] for i in missing], urgent=True)
            fresh = {keys[i]: row for i, row in zip(missing, clean_vectors(made, embedder.dims), strict=True)}
            found.update(fresh)
            _keep(store, embedder, fresh)
        matrix = clean_vectors(np.stack([found[key] for key in keys]), embedder.dims)
    except (EmbeddingError, Interrupted, ValueError):
        return None  # a provider that fails or is stopping, or vectors of another size: the scan stays as it was
    with _lock:
        _held[ident] = matrix
    return matrix


def _keep(store: MemoryStore, embedder: Embedder, vectors: dict[str, np.ndarray]) -> None:
    """Into the embedding cache, where the store takes them: a search never fails for the cache."""
    try:
        store.cache_put(embedder.provider, embedder.model, embedder.key_fingerprint, vectors)
    except Exception as exc:  # any store's error (read-only, busy, gone): they stay in this process only
        log.info("background vectors not cached", error=str(exc))


def padded(scan: VectorScan, background: np.ndarray, query_vector: np.ndarray, pool: int) -> VectorScan:
    """The scan of an index with fewer chunks than `pool`, filled up to it with the background's cosines nearest the
    query. They join the distribution its confidence is read from, and the nearest is the floor the vector side is
    scaled from: a note scores there as far as it is nearer the question than any sentence about nothing."""
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
