"""Harbor's artifact collection: ``[[verifier.collect]]`` hooks, then ``artifacts`` copied out.

As in Harbor 0.25's ``ArtifactHandler``: after the agent (before the verifier) each collect
hook runs in its compose service (``main``: the agent's container; best effort, a failure is
logged), then every artifact entry of the task (and of the step) plus the implicit
``/logs/artifacts`` publish folder is copied into the run folder's ``artifacts/`` (a step's:
``steps/<name>/artifacts/``; what a step published stays for the next, as in Harbor's
docker environment): an entry with a ``destination`` lands there, any other mirrors
its container path (``/app/x`` -> ``artifacts/app/x``). A missing source is ``failed`` in
``manifest.json``, never an error; a later entry overlapping an earlier one is ``skipped``.
"""

from __future__ import annotations

import contextlib
import fnmatch
import io
import json
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from docker.errors import APIError, DockerException, NotFound

from agentrun.harbor.sandbox import HarborSandbox
from agentrun.tasks import ArtifactSection, CollectSection, StepSection, TaskSpec

CONVENTION = "/logs/artifacts"
MAIN = "main"


def collect(
    task: TaskSpec,
    sandbox: HarborSandbox,
    dest: Path,
    *,
    step: StepSection | None = None,
    project: str | None = None,
    log: Callable[[str], None],
) -> list[dict[str, Any]]:
    """Run the collect hooks, copy the artifacts into ``dest``; return the manifest's entries."""
    hooks = [*task.config.verifier.collect, *(step.verifier.collect if step else [])]
    entries = _entries([*task.config.artifacts, *(step.artifacts if step else [])])
    dest.mkdir(parents=True, exist_ok=True)
    manifest: list[dict[str, Any]] = []
    claimed: list[PurePosixPath] = []
    for main_pass in (True, False):  # main first, then the sidecar services, as Harbor
        for hook in hooks:
            if (hook.service == MAIN) == main_pass:
                _run_hook(hook, sandbox, project, log)
        for entry in entries:
            if ((entry.service or MAIN) == MAIN) == main_pass:
                manifest.append(_collect_one(entry, sandbox, dest, claimed, project))
    if manifest:
        (dest / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return manifest


def _entries(raw: Sequence[ArtifactSection]) -> list[ArtifactSection]:
    """The entries, the publish folder first unless an entry names it for main."""
    entries = list(raw)
    if not any(e.source.rstrip("/") == CONVENTION and (e.service or MAIN) == MAIN for e in entries):
        entries.insert(0, ArtifactSection(source=CONVENTION))
    return entries


def _relative(path: str) -> PurePosixPath:
    parts = [p for p in PurePosixPath(path).parts if p not in ("", "/", "..")]
    return PurePosixPath(*parts) if parts else PurePosixPath(".")


def _collect_one(
    entry: ArtifactSection,
    sandbox: HarborSandbox,
    dest: Path,
    claimed: list[PurePosixPath],
    project: str | None,
) -> dict[str, Any]:
    out = _relative(entry.destination or entry.source)
    record: dict[str, Any] = {
        "source": entry.source,
        "destination": f"artifacts/{out}",
        "type": "file" if PurePosixPath(entry.source).suffix else "directory",
        "status": "ok",
        "service": entry.service,
        "exclude": list(entry.exclude),
    }
    if any(out == c or c in out.parents or out in c.parents for c in claimed):
        return {**record, "status": "skipped"}
    claimed.append(out)
    container = _container(sandbox, entry.service, project)
    if container is None:
        return {**record, "status": "failed"}
    try:
        stream, stat = container.get_archive(entry.source)
    except (NotFound, APIError, DockerException):
        return {**record, "status": "failed"}
    is_dir = bool(int(stat.get("mode", 0)) & (1 << 31))  # Go's os.ModeDir
    record["type"] = "directory" if is_dir else "file"
    record["exclude"] = list(entry.exclude) if is_dir else []
    _extract(b"".join(stream), PurePosixPath(entry.source).name, dest / out, entry.exclude)
    return record


def _extract(archive: bytes, top: str, target: Path, exclude: Sequence[str]) -> None:
    """The archive's ``top`` (a file or a folder) to ``target``; unsafe members are dropped
    by tarfile's ``data`` filter, excluded ones as ``tar --exclude`` would."""
    with (
        tempfile.TemporaryDirectory(prefix="agentrun-artifact-") as tmp,
        tarfile.open(fileobj=io.BytesIO(archive)) as tar,
    ):
        members = [m for m in tar.getmembers() if not _excluded(m.name, top, exclude)]
        tar.extractall(tmp, members=members, filter=_safe)
        got = Path(tmp) / top
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_dir() and got.is_dir():
            shutil.copytree(got, target, dirs_exist_ok=True)
        elif got.exists():
            with contextlib.suppress(FileNotFoundError):
                shutil.rmtree(target) if target.is_dir() else target.unlink()
            shutil.move(str(got), target)
        else:
            target.mkdir(parents=True, exist_ok=True)


def _safe(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
    """tarfile's ``data`` filter, a member it refuses (a link out of the artifact, a device)
    skipped rather than ending the copy."""
    try:
        return tarfile.data_filter(member, path)
    except tarfile.FilterError:
        return None


def _excluded(name: str, top: str, patterns: Sequence[str]) -> bool:
    inner = PurePosixPath(name).relative_to(top) if name != top else PurePosixPath(".")
    parts = inner.parts
    return any(
        fnmatch.fnmatch(str(inner), p) or any(fnmatch.fnmatch(part, p) for part in parts) for p in patterns
    )


def _container(sandbox: HarborSandbox, service: str | None, project: str | None) -> Any | None:
    """The agent's container for main, else the compose service's (None when there is none)."""
    if (service or MAIN) == MAIN:
        return sandbox.container
    if project is None:
        return None
    labels = [f"com.docker.compose.project={project}", f"com.docker.compose.service={service}"]
    with contextlib.suppress(APIError, DockerException):
        found = sandbox.client.containers.list(filters={"label": labels})
        return found[0] if found else None
    return None


def _run_hook(
    hook: CollectSection, sandbox: HarborSandbox, project: str | None, log: Callable[[str], None]
) -> None:
    """One ``[[verifier.collect]]`` command; best effort, as in Harbor."""
    user = None if hook.user is None else str(hook.user)
    if hook.service == MAIN:
        result = sandbox.exec(hook.command, timeout=hook.timeout_sec, user=user)
        code, output = result.exit_code, result.output
    else:
        container = _container(sandbox, hook.service, project)
        if container is None:
            log(f"collect hook: no running service {hook.service!r} for {hook.command!r}")
            return
        argv = ["timeout", "-k", "5", f"{hook.timeout_sec:g}", "sh", "-c", hook.command]
        try:
            code, raw = container.exec_run(argv, user=user or "")
        except (APIError, DockerException) as exc:
            log(f"collect hook in {hook.service!r} failed ({hook.command!r}): {exc}")
            return
        output = (raw or b"").decode(errors="replace")
    if code != 0:
        log(f"collect hook in {hook.service!r} exited {code}: {hook.command!r}: {output.strip()[-300:]}")
