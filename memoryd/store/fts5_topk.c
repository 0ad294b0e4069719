/*
** bm25_topk(fts, k, hits, weight, ...): FTS5's bm25() score, negated (larger is better), for the rows that can
** still be among the k best of the query; NULL for the others, which `ORDER BY ... DESC LIMIT k` then drops.
** `hits` lists, comma-separated, how many rows each phrase of the query matches, as far as the caller knows them
** (-1 or nothing for one it does not): those are not counted again by reading the phrase's whole posting list.
**
** Most of a keyword search over a large index goes to reading each matching row's length from the docsize
** table (63% of the time at a million chunks). A row's term frequencies alone bound its score from above: the
** length only ever lowers it. So a row whose bound is below the k-th best score seen so far in the same query
** is dropped before its length is read. The k best are kept in a min-heap per query.
**
** The score of every row it does compute is the one FTS5's bm25() gives, to the last bit: the same IDF
** (log((N - hits + 0.5) / (hits + 0.5)), at least 1e-6), the same average length, the same per-column weights
** and the same order of operations (built with -ffp-contract=off).
*/
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define K1 1.2
#define B 0.75

typedef struct TopK {
  int nPhrase;
  double avgdl;
  double *aIDF;
  double *aFreq;
  int k;            /* how many best scores are kept; 0 to keep none (score every row) */
  int n;            /* how many are kept now */
  double *aHeap;    /* the n best scores so far, a min-heap */
  sqlite3_int64 iLastRowid;
  int bLast;        /* whether iLastRowid was scored (a row may be asked for twice) */
  double lastScore; /* its score, or NAN when it was dropped */
} TopK;

static void topkFree(void *p) { sqlite3_free(p); }

static int countHit(const Fts5ExtensionApi *pApi, Fts5Context *pFts, void *pCount) {
  (void)pApi;
  (void)pFts;
  (*(sqlite3_int64 *)pCount)++;
  return SQLITE_OK;
}

/* The query's constants, computed on its first row as FTS5's bm25() computes them. */
static int topkData(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_value *pK, sqlite3_value *pHits,
                    TopK **pp) {
  TopK *p = (TopK *)pApi->xGetAuxdata(pFts, 0);
  if (p) {
    *pp = p;
    return SQLITE_OK;
  }
  int nPhrase = pApi->xPhraseCount(pFts);
  sqlite3_int64 k = sqlite3_value_int64(pK);
  if (k < 0) k = 0;
  if (k > 100000) k = 100000;
  sqlite3_int64 nByte = sizeof(TopK) + sizeof(double) * (2 * (sqlite3_int64)nPhrase + k);
  p = (TopK *)sqlite3_malloc64(nByte);
  if (!p) return SQLITE_NOMEM;
  memset(p, 0, nByte);
  p->nPhrase = nPhrase;
  p->aIDF = (double *)&p[1];
  p->aFreq = &p->aIDF[nPhrase];
  p->aHeap = &p->aFreq[nPhrase];
  p->k = (int)k;

  sqlite3_int64 nRow = 0, nToken = 0;
  int rc = pApi->xRowCount(pFts, &nRow);
  if (rc == SQLITE_OK) rc = pApi->xColumnTotalSize(pFts, -1, &nToken);
  if (rc == SQLITE_OK) p->avgdl = (double)nToken / (double)nRow;
  const char *zHits = (const char *)sqlite3_value_text(pHits);
  for (int i = 0; rc == SQLITE_OK && i < nPhrase; i++) {
    sqlite3_int64 nHit = -1;
    if (zHits && *zHits) {
      char *zEnd = 0;
      nHit = strtoll(zHits, &zEnd, 10);
      if (zEnd == zHits || (*zEnd != ',' && *zEnd != 0)) {
        rc = SQLITE_MISMATCH; /* not a list of integers */
        break;
      }
      zHits = (*zEnd == ',') ? zEnd + 1 : zEnd;
    }
    if (nHit < 0) {
      nHit = 0;
      rc = pApi->xQueryPhrase(pFts, i, (void *)&nHit, countHit);
    }
    if (rc == SQLITE_OK) {
      double idf = log((nRow - nHit + 0.5) / (nHit + 0.5));
      if (idf <= 0.0) idf = 1e-6;
      p->aIDF[i] = idf;
    }
  }
  if (rc == SQLITE_OK) rc = pApi->xSetAuxdata(pFts, p, topkFree);
  if (rc != SQLITE_OK) {
    sqlite3_free(p);
    return rc;
  }
  *pp = p;
  return SQLITE_OK;
}

static void heapKeep(TopK *p, double score) {
  double *h = p->aHeap;
  int i;
  if (p->n < p->k) {
    i = p->n++;
    while (i > 0 && h[(i - 1) / 2] > score) {
      h[i] = h[(i - 1) / 2];
      i = (i - 1) / 2;
    }
    h[i] = score;
    return;
  }
  if (score <= h[0]) return;
  i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= p->n) break;
    if (c + 1 < p->n && h[c + 1] < h[c]) c++;
    if (h[c] >= score) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = score;
}

static void bm25Topk(const Fts5ExtensionApi *pApi, Fts5Context *pFts, sqlite3_context *pCtx, int nVal,
                     sqlite3_value **apVal) {
  TopK *p = 0;
  if (nVal < 2) {
    sqlite3_result_error(pCtx, "bm25_topk: the number of best rows to keep, or the phrases' hits, is missing", -1);
    return;
  }
  int rc = topkData(pApi, pFts, apVal[0], apVal[1], &p);
  sqlite3_int64 iRowid = pApi->xRowid(pFts);
  if (rc == SQLITE_OK && p->bLast && p->iLastRowid == iRowid) {
    if (isnan(p->lastScore)) sqlite3_result_null(pCtx);
    else sqlite3_result_double(pCtx, p->lastScore);
    return;
  }
  int nInst = 0;
  if (rc == SQLITE_OK) {
    memset(p->aFreq, 0, sizeof(double) * p->nPhrase);
    rc = pApi->xInstCount(pFts, &nInst);
  }
  for (int i = 0; rc == SQLITE_OK && i < nInst; i++) {
    int ip, ic, io;
    rc = pApi->xInst(pFts, i, &ip, &ic, &io);
    if (rc == SQLITE_OK) p->aFreq[ip] += (nVal - 2 > ic) ? sqlite3_value_double(apVal[2 + ic]) : 1.0;
  }
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(pCtx, rc);
    return;
  }
  p->iLastRowid = iRowid;
  p->bLast = 1;
  if (p->k > 0 && p->n == p->k) {
    /* the same sum with the shortest possible row (D = 0): each term only grows */
    double bound = 0.0;
    for (int i = 0; i < p->nPhrase; i++) {
      bound += p->aIDF[i] * ((p->aFreq[i] * (K1 + 1.0)) / (p->aFreq[i] + K1 * (1 - B)));
    }
    if (bound < p->aHeap[0]) {
      p->lastScore = NAN;
      sqlite3_result_null(pCtx);
      return;
    }
  }
  int nTok = 0;
  rc = pApi->xColumnSize(pFts, -1, &nTok);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(pCtx, rc);
    return;
  }
  double D = (double)nTok;
  double score = 0.0;
  for (int i = 0; i < p->nPhrase; i++) {
    score += p->aIDF[i] * ((p->aFreq[i] * (K1 + 1.0)) / (p->aFreq[i] + K1 * (1 - B + B * D / p->avgdl)));
  }
  if (p->k > 0) heapKeep(p, score);
  p->lastScore = score;
  sqlite3_result_double(pCtx, score);
}

static fts5_api *fts5Api(sqlite3 *db) {
  fts5_api *pApi = 0;
  sqlite3_stmt *pStmt = 0;
  if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &pStmt, 0) == SQLITE_OK) {
    sqlite3_bind_pointer(pStmt, 1, (void *)&pApi, "fts5_api_ptr", 0);
    sqlite3_step(pStmt);
  }
  sqlite3_finalize(pStmt);
  return pApi;
}

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_fts5topk_init(sqlite3 *db, char **pzErrMsg, const sqlite3_api_routines *pApi) {
  SQLITE_EXTENSION_INIT2(pApi);
  fts5_api *pFts5 = fts5Api(db);
  if (!pFts5 || pFts5->iVersion < 2) {
    *pzErrMsg = sqlite3_mprintf("bm25_topk: this SQLite has no FTS5");
    return SQLITE_ERROR;
  }
  return pFts5->xCreateFunction(pFts5, "bm25_topk", 0, bm25Topk, 0);
}
