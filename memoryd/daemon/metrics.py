"""Prometheus metrics (`[daemon] metrics_port`, off by default): how long each RPC method takes and how often it
fails, and each agent's state at scrape time (files, chunks, the embedding backlog, syncing, whether its store
answers, its role and a replica's lag). Served on 127.0.0.1 to this user alone (and `metrics_users`), as the web
page is: another user's connection is closed as it is accepted. Nothing of memory's text is ever in them."""

from __future__ import annotations

import pwd
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import structlog
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from memoryd.daemon.rpc import RPCError
from memoryd.web.loopback import DeadlineHandler, LoopbackServer
from memoryd_client.protocol.schema import METHODS

log = structlog.get_logger("memoryd.metrics")
Dispatch = Callable[[Any, Any], Any]
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
REQUEST_SECONDS = 10.0  # a scrape must be sent whole this soon (DeadlineHandler)


class Metrics:
    """The registry: request timings, recorded by `timed`, and the daemon's state, read from `status` at scrape."""

    def __init__(self, status: Callable[[], dict[str, Any]]) -> None:
        self.registry = CollectorRegistry()  # the state is read at scrape, not at registration
        self.duration = Histogram(
            "memoryd_request_duration_seconds",
            "Time to answer an RPC method (socket and web page), by method",
            ["method"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.errors = Counter(
            "memoryd_request_errors", "RPC calls answered with an error, by method and code", ["method", "code"],
            registry=self.registry,
        )  # fmt: skip
        self.registry.register(_State(status))

    def timed(self, dispatch: Dispatch) -> Dispatch:
        def run(method: Any, params: Any) -> Any:
            started, code = time.perf_counter(), None
            try:
                return dispatch(method, params)
            except RPCError as exc:
                code = exc.code
                raise
            except Exception:
                code = "internal_error"
                raise
            finally:
                name = method if isinstance(method, str) and method in METHODS else "unknown"
                self.duration.labels(name).observe(time.perf_counter() - started)
                if code is not None:
                    self.errors.labels(name, code).inc()

        return run

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


class _State(Collector):
    def __init__(self, status: Callable[[], dict[str, Any]]) -> None:
        self._status = status

    def collect(self) -> Iterator[GaugeMetricFamily]:
        state = self._status()
        per_agent = {
            "files": "Files indexed",
            "chunks": "Chunks indexed",
            "embedded_chunks": "Chunks with a vector",
            "embedding_backlog": "Chunks stored without a vector, waiting for the embedding lane",
            "syncing": "1 while a sync runs",
            "store_up": "1 while the agent's index (for PostgreSQL: the primary) answers",
            "needs_reindex": "1 when the vector space changed and the index waits for a reindex",
        }
        families = {key: GaugeMetricFamily(f"memoryd_{key}", doc, labels=["agent"]) for key, doc in per_agent.items()}
        role = GaugeMetricFamily("memoryd_role", "1 for the agent's role on its store", labels=["agent", "role"])
        lag = GaugeMetricFamily("memoryd_replica_lag_seconds", "Seconds a read replica is behind", labels=["agent"])
        for agent in state.get("agents", []):
            name = str(agent.get("agent"))
            health = agent.get("store_health") or {}
            values = {
                "files": agent.get("files"),
                "chunks": agent.get("chunks"),
                "embedded_chunks": agent.get("embedded_chunks"),
                "embedding_backlog": (agent.get("embedding") or {}).get("waiting", 0),
                "syncing": bool(agent.get("syncing")),
                "store_up": not agent.get("index_error") and health.get("ok", True),
                "needs_reindex": bool(agent.get("needs_reindex")),
            }
            for key, value in values.items():
                if value is not None:
                    families[key].add_metric([name], float(value))
            role.add_metric([name, str(agent.get("role", "writer"))], 1.0)
            if isinstance(agent.get("replica_lag_s"), dict):
                lag.add_metric([name], float(agent["replica_lag_s"].get("seconds") or 0.0))
        yield from families.values()
        yield role
        yield lag
        daemon = state.get("daemon") or {}
        if daemon.get("rss_mb") is not None:
            memory = GaugeMetricFamily("memoryd_resident_memory_bytes", "The daemon's resident memory")
            memory.add_metric([], float(daemon["rss_mb"]) * 2**20)
            yield memory
        up = GaugeMetricFamily("memoryd_uptime_seconds", "Seconds since the daemon started")
        up.add_metric([], float(daemon.get("uptime_s") or 0.0))
        yield up


class MetricsServer:
    """GET /metrics on 127.0.0.1:port, for this user's processes only."""

    def __init__(self, port: int, metrics: Metrics, users: tuple[str, ...] = ()) -> None:
        handler = type("Handler", (_Handler,), {"metrics": metrics})
        uids = [pwd.getpwnam(user).pw_uid for user in users]  # KeyError: no such user
        self.httpd = LoopbackServer(("127.0.0.1", port), handler, uids=uids)
        self.port = self.httpd.port
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/metrics"

    def start(self) -> None:
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="metrics", daemon=True)
        self._thread.start()
        log.info("metrics", url=self.url)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(DeadlineHandler):
    metrics: Metrics
    timeout = REQUEST_SECONDS

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] != "/metrics":
            self.send_error(404)
            return
        body = self.metrics.exposition()
        self.send_response(200)
        self.send_header("Content-Type", CONTENT_TYPE_LATEST)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
