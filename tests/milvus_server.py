"""A real Milvus server for tests, started from the PyPI package ``milvus`` (no Docker needed).

The package ``milvus`` (2.3.5) ships the Milvus *standalone* binary (the same server code a Docker
image runs: byte-counted VARCHAR, duplicate primary keys kept, knowhere indexes) as LZMA files,
and ``milvus.MilvusServer`` starts it. This module wraps it for pytest:

* ``MilvusTestServer``: start on a free port in a folder of your choice, ``uri``, ``stop()``.
* ``milvus_server_session(tmp_path_factory)``: the generator behind the session-scoped
  ``milvus_server`` fixture in ``conftest.py``. It yields a running ``MilvusTestServer`` and stops
  it at the end of the session. Where the platform cannot run the binary (not Linux x86_64, or
  the package is missing) it calls ``pytest.skip`` with the reason, so tests never pass silently.
  On a supported platform a server that does not start is a test *error*, with its log's tail.
* ``MILVUS_TEST_URI``: set it (e.g. ``http://localhost:19530`` from ``docker compose up -d``) to
  test against a server you started yourself instead; nothing is started or stopped then.

Start time: the first start unpacks ~250 MB of binaries (~9 s on 2 cores) into a cache folder
(``$XDG_CACHE_HOME`` or ``~/.cache``, ``llm-memory-course/milvus-server-<version>``, shared by
later runs under a file lock); after that a start takes a few seconds. Data and logs go to the
per-run folder, so every session starts empty.
"""

from __future__ import annotations

import os
import platform
import socket
import sys
import time
from pathlib import Path

SUPPORTED = sys.platform == "linux" and platform.machine().lower() in {"x86_64", "amd64"}
START_TIMEOUT_S = 120
ETCD_PEER_PORT = 2380  # fixed in the bundled server's embedded etcd: one server per machine


def unsupported_reason() -> str | None:
    """Why the bundled server cannot run here (a sentence), or ``None`` if it can."""
    if not SUPPORTED:
        return (f"the PyPI package 'milvus' ships a Linux x86_64 binary; this is {sys.platform} "
                f"{platform.machine()}. Start a server (docker compose up -d) and set MILVUS_TEST_URI.")
    try:
        import milvus  # noqa: F401
    except ImportError:
        return "the PyPI package 'milvus' (the bundled Milvus server) is not installed"
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _binary_cache() -> Path:
    import milvus

    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "llm-memory-course" / f"milvus-server-{milvus.__version__}"


class MilvusTestServer:
    """One Milvus standalone server process, data in ``base_dir``, gRPC on ``port``.

    Args:
        base_dir: folder for its configuration, data and logs (created; use a temporary one).
        port: the gRPC/HTTP port clients use (default: a free port).

    Use ``start()`` / ``stop()``, or ``with MilvusTestServer(dir) as server: ...``.
    """

    def __init__(self, base_dir: str | Path, port: int | None = None) -> None:
        self.base_dir = Path(base_dir)
        self.port = port or free_port()
        self.start_seconds: float | None = None
        self._server = None

    @property
    def uri(self) -> str:
        """``http://127.0.0.1:<port>``, what ``MemoryStore(uri=...)`` takes."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_dir(self) -> Path:
        """Where the server writes ``milvus-stdout.log`` / ``milvus-stderr.log``."""
        return self.base_dir / "logs"

    def start(self) -> MilvusTestServer:
        """Unpack the binary (cached), start the process and wait until it answers ``/healthz``.

        Raises:
            RuntimeError: the server exited or did not become healthy in ``START_TIMEOUT_S``;
                the message ends with the tail of its log.
        """
        from filelock import FileLock
        from milvus import MilvusServer, _initialize_data_files

        began = time.perf_counter()
        cache = _binary_cache()
        cache.mkdir(parents=True, exist_ok=True)
        with FileLock(str(cache) + ".lock", timeout=300):
            _initialize_data_files(str(cache))  # no-op when the md5 stamps match
        self.base_dir.mkdir(parents=True, exist_ok=True)
        bin_link = self.base_dir / "bin"
        if not bin_link.exists():
            bin_link.symlink_to(cache / "bin", target_is_directory=True)
        if not _port_free(ETCD_PEER_PORT):
            raise RuntimeError(
                f"port {ETCD_PEER_PORT} is in use: the bundled Milvus server's embedded etcd needs it, "
                "so only one such server can run on a machine. Stop the other one (another test "
                "run?), or start your own server and set MILVUS_TEST_URI."
            )
        server = MilvusServer(wait_for_started=False)
        server.set_base_dir(str(self.base_dir))
        server.listen_port = self.port
        self._server = server
        try:
            server.start()
            self._wait_healthy(server)
        except Exception as exc:
            self.stop()
            raise RuntimeError(f"the Milvus test server did not start: {exc}\n{self.log_tail()}") from exc
        self.start_seconds = time.perf_counter() - began
        return self

    def _wait_healthy(self, server) -> None:
        """Poll ``/healthz`` until it says OK; fail at once if the process exits (the package's
        own wait keeps polling a dead process for 180 s)."""
        import urllib.error
        import urllib.request

        url = f"http://127.0.0.1:{server.webservice_port}/healthz"
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            code = server.server_proc.poll()
            if code is not None:
                raise RuntimeError(f"the server process exited with code {code}")
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    if b"OK" in response.read():
                        return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.2)
        raise TimeoutError(f"no healthy answer from {url} in {START_TIMEOUT_S} s")

    def stop(self) -> None:
        """Terminate the process (SIGTERM, then SIGKILL after 1 s). Safe to call twice."""
        if self._server is not None:
            self._server.stop()
            self._server = None

    def log_tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines of the server's logs, for error messages."""
        parts = []
        for name in ("milvus-stderr.log", "milvus-stdout.log"):
            path = self.log_dir / name
            if path.is_file():
                text = path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
                parts.append(f"--- {path} ---\n" + "\n".join(text))
        return "\n".join(parts) or "(no server log)"

    def __enter__(self) -> MilvusTestServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class ExternalServer:
    """A server someone else runs (``MILVUS_TEST_URI``): same ``uri`` attribute, nothing to stop."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self.start_seconds = 0.0

    def stop(self) -> None:
        pass


def milvus_server_session(tmp_path_factory):
    """Generator for a session-scoped fixture: yields a running server, stops it afterwards.

    Skips (``pytest.skip``, with the reason) where the bundled binary cannot run and no
    ``MILVUS_TEST_URI`` is set.
    """
    import pytest

    external = os.environ.get("MILVUS_TEST_URI")
    if external:
        yield ExternalServer(external)
        return
    reason = unsupported_reason()
    if reason:
        pytest.skip(f"no Milvus server for these tests: {reason}")
    server = MilvusTestServer(tmp_path_factory.mktemp("milvus-server"))
    server.start()
    try:
        yield server
    finally:
        server.stop()
