"""The index schema and its versioned migrations."""

from __future__ import annotations

from collections.abc import Callable

import apsw

from memoryd.store.rows import one_row

SCHEMA_VERSION = 7
# Bump when what a chunk holds changes (analyzer tokens, chunk boundaries, chunk metadata, the built-in redaction
# rules): the index is then rebuilt. 9: Chinese, Vietnamese and Thai password labels; unspaced prose is no secret.
ANALYZER_VERSION = "9"

FTS_TOKENIZER = "unicode61 remove_diacritics 0 tokenchars '_' categories 'L* N* Co M*'"

_V1 = """
CREATE TABLE IF NOT EXISTS meta(
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS files(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    abs_path TEXT NOT NULL,
    source TEXT NOT NULL,
    hash TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    indexed_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    heading TEXT NOT NULL DEFAULT '',
    context TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    hash TEXT NOT NULL,
    model TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_file ON chunks(file_id);
CREATE INDEX IF NOT EXISTS chunks_unembedded ON chunks(model) WHERE model = '';
CREATE TABLE IF NOT EXISTS embedding_cache(
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    key_fp TEXT NOT NULL,
    hash TEXT NOT NULL,
    dims INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY(provider, model, key_fp, hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chunk_vectors(
    chunk_id INTEGER PRIMARY KEY,
    vector BLOB NOT NULL
);
"""

FTS_DDL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5("
    f"body, exact, heading, grams, content='', contentless_delete=1, tokenize=\"{FTS_TOKENIZER}\")"
)


FTS_INSERT = "INSERT INTO chunks_fts(rowid, body, exact, heading, grams) VALUES (?, ?, ?, ?, ?)"

VOCAB_DDL = "CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts_vocab USING fts5vocab(chunks_fts, 'row')"


def vec_ddl(dims: int) -> str:
    return f"CREATE VIRTUAL TABLE IF NOT EXISTS chunks_vec USING vec0(embedding float[{int(dims)}])"


# v2: chunk time, memory type and importance (ranking), transcript cursors, access statistics.
_V2 = """
ALTER TABLE chunks ADD COLUMN ts REAL;
ALTER TABLE chunks ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE chunks ADD COLUMN importance REAL;
CREATE TABLE IF NOT EXISTS cursors(
    file_id INTEGER PRIMARY KEY REFERENCES files(id) ON DELETE CASCADE,
    inode INTEGER NOT NULL,
    offset INTEGER NOT NULL,
    lines INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS access(
    hash TEXT PRIMARY KEY,
    hits INTEGER NOT NULL,
    last_at REAL NOT NULL
) WITHOUT ROWID;
"""

# v3: the embedding cache as a rowid table. WITHOUT ROWID keeps whole rows in the key B-tree, and 1.5 KB vector
# rows spilled to overflow pages: 4.4 KB on disk per cached vector instead of ~2 KB.
_V3 = """
CREATE TABLE embedding_cache_v3(
    id INTEGER PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    key_fp TEXT NOT NULL,
    hash TEXT NOT NULL,
    dims INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created_at REAL NOT NULL
);
INSERT INTO embedding_cache_v3(provider, model, key_fp, hash, dims, vector, created_at)
    SELECT provider, model, key_fp, hash, dims, vector, created_at FROM embedding_cache;
DROP TABLE embedding_cache;
ALTER TABLE embedding_cache_v3 RENAME TO embedding_cache;
CREATE UNIQUE INDEX embedding_cache_key ON embedding_cache(hash, provider, model, key_fp);
"""


def _v4(conn: apsw.Connection) -> None:
    """v4: a `grams` column for the characters of unspaced scripts. FTS5 cannot add a column, so the table is
    made anew, empty: the analyzer changed with it, and the reindex that follows (ANALYZER_VERSION) fills it."""
    has_fts = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()
    conn.execute("DROP TABLE IF EXISTS chunks_fts_vocab; DROP TABLE IF EXISTS chunks_fts;")
    if has_fts:
        conn.execute(FTS_DDL)
        conn.execute(VOCAB_DDL)


def _v5(conn: apsw.Connection) -> None:
    """v5: the file line of each line of a chunk's text where they are not consecutive (transcripts skip tool
    lines). Idempotent: a development build added the column under v4."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(chunks)")}
    if "source_lines" not in columns:
        conn.execute("ALTER TABLE chunks ADD COLUMN source_lines TEXT")


# v6: each chunk's window vectors (memoryd.ingest.windows); a chunk without a row has none yet.
_V6 = """
CREATE TABLE IF NOT EXISTS chunk_windows(
    chunk_id INTEGER PRIMARY KEY,
    vectors BLOB NOT NULL
);
"""

# v7: each chunk's language (memoryd.sources.language), filled by the reindex the chunking signature asks for.
_V7 = "ALTER TABLE chunks ADD COLUMN lang TEXT NOT NULL DEFAULT ''"

MIGRATIONS: dict[int, Callable[[apsw.Connection], object]] = {
    1: lambda conn: conn.execute(_V1),
    2: lambda conn: conn.execute(_V2),
    3: lambda conn: conn.execute(_V3),
    4: _v4,
    5: _v5,
    6: lambda conn: conn.execute(_V6),
    7: lambda conn: conn.execute(_V7),
}


def migrate(conn: apsw.Connection) -> int:
    """Bring the schema to SCHEMA_VERSION, one transaction per step; returns the version found."""
    found = one_row(conn.execute("PRAGMA user_version").fetchone())[0]
    if found > SCHEMA_VERSION:
        raise RuntimeError(f"index schema v{found} is newer than this memoryd (v{SCHEMA_VERSION}); upgrade memoryd")
    for version in range(found + 1, SCHEMA_VERSION + 1):
        with conn:
            MIGRATIONS[version](conn)
            conn.execute(f"PRAGMA user_version = {version}")
    return found
