"""The benches' side of the harness: a daemon started on a bench's config (its agents, the local model), and
the small statistics the reports need. The process itself is tests/harness.py's Daemon."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from memoryd.config import default_data_dir, default_model_path
from tests.harness import Daemon, launch, wait_answering


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def median(values: list[float]) -> float:
    return percentile(values, 50)


def stats(values: list[float]) -> dict[str, float]:
    """Count, p50, p99 and max of durations in seconds, in ms."""
    return {
        "n": len(values),
        "p50_ms": round(median(values) * 1000, 2),
        "p99_ms": round(percentile(values, 99) * 1000, 2),
        "max_ms": round(max(values) * 1000, 2) if values else float("nan"),
    }


@dataclass
class BenchAgent:
    id: str
    workspace: Path
    sessions_dir: Path | None = None
    extra: str = ""  # more lines of its [[agents]] table (a PostgreSQL store, say)


def write_config(
    path: Path,
    agents: list[BenchAgent],
    data_dir: Path,
    socket: Path,
    provider: str,
    debounce: float,
    sync_on_search: bool = True,
    model_path: Path | None = None,
    daemon_extra: str = "",
) -> Path:
    model = model_path or default_model_path(Path(os.environ.get("MEMORYD_DATA_DIR") or default_data_dir()))
    tables = []
    for agent in agents:
        sessions = (
            f'sources = ["memory", "sessions"]\nsessions_dir = ["{agent.sessions_dir}"]\n' if agent.sessions_dir else ""
        )
        tables.append(f"""[[agents]]
id = "{agent.id}"
workspace = "{agent.workspace}"
{sessions}{agent.extra}[agents.embedding]
provider = "{provider}"
model_path = "{model}"
""")
    path.write_text(
        f"""
data_dir = "{data_dir}"
socket = "{socket}"
[daemon]
debounce_seconds = {debounce}
sync_on_search = {"true" if sync_on_search else "false"}
reconcile_seconds = 0
{daemon_extra}
"""
        + "\n".join(tables)
    )
    return path


def start_daemon(
    workspace: Path,
    data_dir: Path,
    *,
    provider: str = "local",
    debounce: float = 1.5,
    sync_on_search: bool = True,
    model_path: Path | None = None,
    agents: list[BenchAgent] | None = None,
    daemon_extra: str = "",
) -> Daemon:
    run_dir = Path(tempfile.mkdtemp(prefix="mdb-", dir="/tmp"))
    socket = run_dir / "m.sock"
    data_dir.mkdir(parents=True, exist_ok=True)
    config = write_config(
        run_dir / "config.toml",
        agents or [BenchAgent("main", workspace)],
        data_dir,
        socket,
        provider,
        debounce,
        sync_on_search,
        model_path,
        daemon_extra,
    )
    return wait_answering(launch(config, socket, data_dir, workspace, data_dir / "daemon.log"))
