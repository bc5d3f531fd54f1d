"""``--image-map FROM=TO``: substitute a task Dockerfile's base images at build time.

Harbor tasks pin public bases (``FROM python:3.12-slim``, ``FROM ubuntu:24.04``) that a
machine without a registry cannot pull. A map (flags, or a file of ``FROM=TO`` lines)
rewrites those ``FROM`` lines in a copy of the build context; the task folder is not
touched, and the run records each substitution it made.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentrun.errors import UserError

# FROM [--platform=...] IMAGE [AS NAME]
_FROM = re.compile(r"^(\s*FROM\s+(?:--\S+\s+)*)(\S+)(.*)$", re.IGNORECASE)
_DEFAULT_REGISTRY = ("docker.io/library/", "docker.io/", "index.docker.io/library/")


@dataclass(frozen=True)
class Substitution:
    """One base image replaced: where, what, by what."""

    file: str
    original: str
    replacement: str


def parse_image_map(entries: Iterable[str] = (), files: Iterable[Path] = ()) -> dict[str, str]:
    """``FROM=TO`` entries, then files of such lines (``#`` comments, blank lines skipped)."""
    lines: list[tuple[str, str]] = [(e, "--image-map") for e in entries]
    for path in files:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise UserError(f"--image-map-file {path}: {exc.strerror or exc}") from None
        lines += [
            (ln, str(path)) for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
        ]
    mapping: dict[str, str] = {}
    for line, where in lines:
        source, sep, target = line.strip().partition("=")
        if not sep or not source.strip() or not target.strip():
            raise UserError(
                f"{where}: {line.strip()!r} is not FROM=TO (e.g. python:3.12-slim=agentrun-sandbox:base)"
            )
        mapping[_normal(source.strip())] = target.strip()
    return mapping


def _normal(image: str) -> str:
    for prefix in _DEFAULT_REGISTRY:
        if image.startswith(prefix):
            return image[len(prefix) :]
    return image


def rewrite_dockerfile(
    text: str, mapping: Mapping[str, str], *, file: str = "Dockerfile"
) -> tuple[str, list[Substitution]]:
    """The Dockerfile with every mapped ``FROM`` image replaced, and what was replaced."""
    out: list[str] = []
    done: list[Substitution] = []
    for line in text.splitlines(keepends=True):
        match = _FROM.match(line.rstrip("\r\n"))
        target = mapping.get(_normal(match.group(2))) if match else None
        if match and target:
            ending = line[len(line.rstrip("\r\n")) :]
            line = f"{match.group(1)}{target}{match.group(3)}{ending}"
            done.append(Substitution(file=file, original=match.group(2), replacement=target))
        out.append(line)
    return "".join(out), done


def planned_substitutions(
    dockerfile: Path, mapping: Mapping[str, str], *, root: Path | None = None
) -> list[Substitution]:
    """What ``rewrite_dockerfile`` would replace in this file (none if it is missing); named
    relative to ``root`` (default: the file's own folder)."""
    if not mapping or not dockerfile.is_file():
        return []
    name = dockerfile.relative_to(root).as_posix() if root else dockerfile.name
    return rewrite_dockerfile(dockerfile.read_text(), mapping, file=name)[1]
