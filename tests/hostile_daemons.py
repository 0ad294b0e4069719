"""Fake memoryd daemons that misbehave, each a small Unix-socket server in a process of its own, and a hook run as a
platform runs it (a whole `memctl hook` process), for the hooks' deadline tests and bench.hooks.

python -m tests.hostile_daemons BEHAVIOUR SOCKET   # serves until killed; prints "ready" once it listens

- healthy: answers every call at once (recall, agents, get, sync, ping), with two dated notes in its workspace;
- hung: a healthy one, SIGSTOPped once it listens (the kernel still queues connections and takes requests);
- slow: answers every call, each after 1.8 s;
- dribble: answers one byte a second;
- notify: answers nothing, but sends a notice every 0.5 s;
- slow_accept: never accepts, its listen queue full (connecting fails with EAGAIN);
- down: nothing at the socket path; file: a regular file there; dangling: a link to nothing."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgpack

BEHAVIOURS = ("healthy", "down", "file", "dangling", "hung", "slow", "dribble", "notify", "slow_accept")
HOSTILE = tuple(b for b in BEHAVIOURS if b != "healthy")
ANSWERING = ("healthy", "slow")  # where a hook may have an answer to print
SLOW_SECONDS = 1.8  # just short of the 2 s each call once had: a session start's several calls added up past 5 s
DRIBBLE_SECONDS = 1.0
NOTICE_SECONDS = 0.5
STAGGER_SECONDS = 0.1
LIFETIME_SECONDS = 900  # a fake left behind by a test that died ends by itself
ROOT = Path(__file__).resolve().parent.parent
BLOCK = "<memoryd-recall>\nMemories that may bear on this:\n- memory/2026-11-24.md#L3-L3: Alice prefers Postgres (ü).\n"
NOTES = {"2026-11-23.md": "# 2026-11-23\n\n- The heron flag ships on Tuesday.\n", "2026-11-24.md": "- Postgres.\n"}


def answer(method: str, params: list[Any], workspace: str) -> Any:
    """What a healthy daemon answers, in shape if not in substance."""
    named = params[0] if params and isinstance(params[0], dict) else {}
    if method == "recall":
        return {"block": BLOCK + "</memoryd-recall>", "memories": [], "tokens": 30, "skipped": None}
    if method == "agents":
        return [{"id": "main", "default": True, "workspace": workspace}]
    if method == "get":
        text = NOTES.get(os.path.basename(str(named.get("path", ""))), "")
        return {"path": named.get("path"), "text": text, "from_line": 1, "total_lines": text.count("\n")}
    if method == "sync":
        return {"agent": "main", "done": True, "report": {}, "progress": None, "error": None}
    return {}


def serve_connection(conn: socket.socket, behaviour: str, workspace: str) -> None:
    unpacker = msgpack.Unpacker(raw=False)
    with contextlib.suppress(OSError), conn:
        while data := conn.recv(65536):
            unpacker.feed(data)
            for message in unpacker:
                msgid, method, params = message[1], message[2], message[3]
                reply = msgpack.packb([1, msgid, None, answer(method, params, workspace)])
                if behaviour == "dribble":
                    for byte in reply:
                        conn.sendall(bytes([byte]))
                        time.sleep(DRIBBLE_SECONDS)
                elif behaviour == "slow":
                    time.sleep(SLOW_SECONDS)
                    conn.sendall(reply)
                elif behaviour == "notify":
                    while True:
                        conn.sendall(msgpack.packb([2, "memoryd.progress", [{"done": 0}]]))
                        time.sleep(NOTICE_SECONDS)
                else:
                    conn.sendall(reply)


def fill_listen_queue(path: str) -> list[socket.socket]:
    """Connections to our own socket until the queue is full: the next connect fails with EAGAIN."""
    held = []
    while True:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.setblocking(False)
        try:
            client.connect(path)
        except BlockingIOError:
            client.close()
            return held
        held.append(client)


def serve(behaviour: str, path: str) -> None:
    workspace = os.path.join(os.path.dirname(path), "ws")
    for name, text in NOTES.items():
        os.makedirs(os.path.join(workspace, "memory"), exist_ok=True)
        Path(workspace, "memory", name).write_text(text)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1 if behaviour == "slow_accept" else 64)
    held = fill_listen_queue(path) if behaviour == "slow_accept" else []
    threading.Timer(LIFETIME_SECONDS, os._exit, (0,)).start()
    print("ready", flush=True)
    if behaviour == "slow_accept":
        time.sleep(LIFETIME_SECONDS)
        for client in held:
            client.close()
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve_connection, args=(conn, behaviour, workspace), daemon=True).start()


@contextlib.contextmanager
def hostile_daemon(behaviour: str) -> Iterator[str]:
    """A socket path (in a short folder of its own) where a daemon behaves as `behaviour` says."""
    folder = tempfile.mkdtemp(prefix="md-", dir="/tmp")
    path = os.path.join(folder, "m.sock")
    process = None
    try:
        if behaviour == "file":
            Path(path).write_text("not a socket\n")
        elif behaviour == "dangling":
            os.symlink(os.path.join(folder, "gone.sock"), path)
        elif behaviour != "down":
            served = "healthy" if behaviour == "hung" else behaviour
            process = subprocess.Popen(
                [sys.executable, "-m", "tests.hostile_daemons", served, path], cwd=ROOT, stdout=subprocess.PIPE
            )
            assert process.stdout is not None and process.stdout.readline() == b"ready\n", behaviour
            if behaviour == "hung":
                os.kill(process.pid, signal.SIGSTOP)
        yield path
    finally:
        if process is not None:
            process.kill()
            process.wait()
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class HookRun:
    code: int
    stdout: str
    stderr: str
    seconds: float


def memctl_command() -> list[str]:
    """memctl as the installers write it: the script beside this Python, else the module."""
    beside = os.path.join(os.path.dirname(sys.executable), "memctl")
    return [beside] if os.access(beside, os.X_OK) else [sys.executable, "-m", "memoryd_client.memctl"]


def hook_env(socket_path: str, data_dir: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORYD_", "LC_", "LANG", "PYTHONIOENCODING"))}
    return {**env, "MEMORYD_SOCKET": socket_path, "MEMORYD_DATA_DIR": data_dir, **extra}


def start_hook(
    platform: str, event: str, env: dict[str, str], *args: str, stdin: bytes = b"{}", close_stdin: bool = True
) -> tuple[subprocess.Popen[bytes], float]:
    """A `memctl hook` process given its input; it and the moment it started."""
    started = time.monotonic()
    process = subprocess.Popen(
        [*memctl_command(), "hook", platform, event, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdin is not None
    with contextlib.suppress(BrokenPipeError):
        process.stdin.write(stdin)
        process.stdin.flush()
        if close_stdin:
            process.stdin.close()
    return process, started


def finish_hook(process: subprocess.Popen[bytes], started: float, timeout: float) -> HookRun:
    """The run's outcome; a process still running after `timeout` seconds is killed (code -9). A stdin left open
    stays open: the caller closes it."""
    process.stdin = None
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    seconds = time.monotonic() - started
    return HookRun(process.returncode, out.decode(errors="replace"), err.decode(errors="replace"), seconds)


def run_hook(
    platform: str, event: str, env: dict[str, str], *args: str, stdin: bytes = b"{}", timeout: float = 60
) -> HookRun:
    process, started = start_hook(platform, event, env, *args, stdin=stdin)
    return finish_hook(process, started, timeout)


def together(runs: list[Callable[[], HookRun]]) -> list[HookRun]:
    """Several hook runs at once, started STAGGER_SECONDS apart (not every Python start-up on the same instant)."""
    with ThreadPoolExecutor(len(runs)) as pool:
        futures = []
        for run in runs:
            futures.append(pool.submit(run))
            time.sleep(STAGGER_SECONDS)
        return [future.result() for future in futures]


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2])
