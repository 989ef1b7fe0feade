"""Start a real ``tooltrap serve`` process on a loopback socket bound here (no port race) and wait until it
says it serves, however long that takes (never a fixed sleep); a server that exits first fails the test
with its stderr."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator

import pytest

pytest.importorskip("fastapi", reason="the server extra (fastapi) is not installed")
pytest.importorskip("uvicorn", reason="the server extra (uvicorn) is not installed")
pytest.importorskip("websockets", reason="the server extra (websockets) is not installed")
pytest.importorskip("httpx", reason="the server extra (httpx) is not installed")


@contextlib.contextmanager
def served(env_id: str, *options: str) -> Iterator[str]:
    """A ``tooltrap serve ENV_ID OPTIONS`` process; yields its base URL and kills it after."""
    with socket.socket() as sock, tempfile.TemporaryFile() as errors:
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
        port = sock.getsockname()[1]
        # from a folder without tooltrap/ in it: -m tooltrap must find the installed package
        proc = subprocess.Popen(
            [sys.executable, "-m", "tooltrap", "serve", env_id, *options, "--fd", str(sock.fileno())],
            pass_fds=[sock.fileno()],
            stdout=subprocess.PIPE,
            stderr=errors,
            cwd=tempfile.gettempdir(),
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the ready line, or EOF when the process ended
        if not line.startswith(b"serving "):
            proc.kill()
            proc.wait()
            errors.seek(0)
            raise RuntimeError(f"tooltrap serve exited: {errors.read().decode(errors='replace')[-3000:]}")
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.kill()
            proc.wait()
            errors.seek(0)
            log = errors.read().decode(errors="replace")
            # an env's bug is logged server-side; none is expected in these tests
            assert "Traceback" not in log, log[-3000:]
