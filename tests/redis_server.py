"""A real ``redis-server`` on 127.0.0.1 for the tests of :class:`~neuron_context.RedisStore`.

The test session starts one server (a free port, no persistence, a temporary folder) the
first time a test asks for it, and stops it at the end. Without the binary a test that
needs it is skipped, saying how to install it; under CI (``$CI`` set), whose
``.ci/run`` installs it, it fails instead.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

__all__ = ["redis_server"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """A running server's URL (``redis://127.0.0.1:<port>/0``); skipped or, under CI,
    failed when ``redis-server`` is not installed."""
    binary = shutil.which("redis-server")
    if binary is None:
        reason = "redis-server is not installed (apt-get install redis-server)"
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail(f"{reason}; CI is set: .ci/run installs it", pytrace=False)
        pytest.skip(reason)
    port = _free_port()
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(folder),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # Wait for the server's first answer, not for a time: poll until it pongs or exits.
        while not _ping(port):
            if process.poll() is not None:
                pytest.fail(f"redis-server exited with {process.returncode}", pytrace=False)
            time.sleep(0.01)  # pacing the polls, not a timeout
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait()
