"""Record Harbor's own result for each probe task: harbor_expected.json beside its task.toml.

    .venv/bin/python scripts/harbor_reference.py [TASK_DIR...]   (default: every probe task)

Each task is copied with its Dockerfiles' FROM lines substituted by the probes' image map
(no registry here), then run by Harbor itself (scripts/harbor-env.sh: Harbor 0.25 in a
Debian trixie container, driving this machine's Docker engine) with its oracle agent and
with its no-op agent. Harbor's docker environment rejects network_mode "no-network" here
(its enforcement needs a sidecar image that cannot be pulled), so the copies run with
network_mode "public"; the record says so. That covers the per-phase modes too ([agent] and
[verifier] network_mode): Harbor enforces those with the same sidecar, so their probes are
recorded with every phase public and assert only what holds either way.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from agentrun.harbor.imagemap import parse_image_map, rewrite_dockerfile

HERE = Path(__file__).resolve().parent.parent
PROBES = HERE / "tests" / "fixtures" / "harbor_tasks"
IMAGE_MAP_FILE = PROBES / "image-map.txt"
AGENTS = ("oracle", "nop")


def harbor(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [str(HERE / "scripts" / "harbor-env.sh"), "run", "harbor", *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd="/tmp", check=False, timeout=3600)


def prepared_copy(task: Path, into: Path, mapping: dict[str, str]) -> tuple[Path, list[str], bool]:
    """The task with FROM lines mapped and any no-network mode made public."""
    copy = into / task.name
    shutil.copytree(task, copy, ignore=shutil.ignore_patterns("harbor_expected.json"))
    done: list[str] = []
    for dockerfile in copy.rglob("Dockerfile"):
        text, subs = rewrite_dockerfile(
            dockerfile.read_text(), mapping, file=str(dockerfile.relative_to(copy))
        )
        dockerfile.write_text(text)
        done += [f"{s.file}: {s.original} -> {s.replacement}" for s in subs]
    toml = (copy / "task.toml").read_text()
    made_public = bool(re.search(r"allow_internet\s*=\s*false|network_mode\s*=\s*\"no-network\"", toml))
    toml = re.sub(r"allow_internet\s*=\s*false", "allow_internet = true", toml)
    toml = re.sub(r"network_mode\s*=\s*\"no-network\"", 'network_mode = "public"', toml)
    (copy / "task.toml").write_text(toml)
    return copy, done, made_public


def run_agent(copy: Path, agent: str, jobs: Path) -> dict[str, object]:
    job = f"{copy.name}-{agent}"
    proc = harbor("run", "-p", str(copy), "-a", agent, "-o", str(jobs), "--job-name", job, "-y", "-q")
    trials = (
        [p for p in (jobs / job).iterdir() if (p / "result.json").is_file()] if (jobs / job).is_dir() else []
    )
    if not trials:
        raise SystemExit(f"harbor produced no trial for {job}: {proc.stdout[-800:]} {proc.stderr[-800:]}")
    trial = json.loads((trials[0] / "result.json").read_text())
    rewards = (trial.get("verifier_result") or {}).get("rewards")
    exception = trial.get("exception_info") or None
    return {
        "rewards": rewards,
        "reward": None
        if not rewards
        else rewards.get("reward", next(iter(rewards.values())) if len(rewards) == 1 else None),
        "exception": None if exception is None else exception.get("exception_type"),
    }


def main(argv: list[str]) -> None:
    mapping = parse_image_map([], [IMAGE_MAP_FILE])
    tasks = [Path(a).resolve() for a in argv] or sorted(
        p for p in PROBES.iterdir() if (p / "task.toml").is_file()
    )
    version = harbor("--version").stdout.strip()
    for task in tasks:
        with tempfile.TemporaryDirectory(prefix="harbor-ref-", dir="/tmp") as tmp:
            copy, done, made_public = prepared_copy(task, Path(tmp), mapping)
            record: dict[str, object] = {
                "harbor_version": version,
                "image_map": done,
                "network": "made public for Harbor (its no-network mode cannot run here)"
                if made_public
                else "as the task says",
            }
            for agent in AGENTS:
                record[agent] = run_agent(copy, agent, Path(tmp) / "jobs")
        (task / "harbor_expected.json").write_text(json.dumps(record, indent=2) + "\n")
        print(task.name, json.dumps({a: record[a] for a in AGENTS}))


if __name__ == "__main__":
    main(sys.argv[1:])
