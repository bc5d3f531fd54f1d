"""The workspace's git history, kept on the host beside the workspace, out of the agent's reach.

::

    <root>/git        git dir (GIT_DIR): the initial commit, then one commit per turn that changed files
    <workspace>       work tree (GIT_WORK_TREE): the host folder bound to /workspace in the sandbox

Every git command runs with the environment from ``git_env``: no system or global config,
no hooks, no signing, no line-ending conversion, a fixed author. So nothing from the host's
git setup (config, hooks, signing) runs or changes what is recorded.
Callers hold their own lock; these functions do not.
"""

from __future__ import annotations

import os
from pathlib import Path

import git

# Paths the initial commit and diff() leave out: caches and environments, not the agent's work.
GIT_EXCLUDES = (
    "__pycache__/\n*.pyc\n.pytest_cache/\n.mypy_cache/\n.ruff_cache/\nnode_modules/\n.venv/\nvenv/\n"
)


def git_env(git_dir: Path, workspace: Path) -> dict[str, str]:
    """The environment every git command on the workspace runs with."""
    return {
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": str(workspace),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_COUNT": "4",
        "GIT_CONFIG_KEY_0": "safe.directory",
        "GIT_CONFIG_VALUE_0": str(workspace),
        "GIT_CONFIG_KEY_1": "core.hooksPath",
        "GIT_CONFIG_VALUE_1": os.devnull,
        "GIT_CONFIG_KEY_2": "commit.gpgsign",
        "GIT_CONFIG_VALUE_2": "false",
        "GIT_CONFIG_KEY_3": "core.autocrlf",
        "GIT_CONFIG_VALUE_3": "false",
        "GIT_AUTHOR_NAME": "agentrun",
        "GIT_AUTHOR_EMAIL": "agentrun@localhost",
        "GIT_COMMITTER_NAME": "agentrun",
        "GIT_COMMITTER_EMAIL": "agentrun@localhost",
    }


def open_repo(git_dir: Path, workspace: Path) -> git.Repo:
    """The workspace repository (git dir outside the workspace, work tree = the workspace)."""
    repo = git.Repo(git_dir)
    repo.git.update_environment(**git_env(git_dir, workspace))
    return repo


def init_repo(git_dir: Path, workspace: Path) -> str:
    """Create the git dir, commit the workspace as it is (empty or not); return that commit's sha."""
    git.Repo.init(git_dir, bare=True, initial_branch="main")
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "exclude").write_text(GIT_EXCLUDES)
    repo = open_repo(git_dir, workspace)
    repo.git.config("core.bare", "false")
    repo.git.config("core.worktree", str(workspace))
    repo.git.add("-A")
    repo.git.commit("--allow-empty", "-q", "-m", "initial workspace")
    return str(repo.git.rev_parse("HEAD"))


def commit_all(repo: git.Repo, message: str) -> str | None:
    """Commit everything in the work tree if it changed; return the new sha, or None."""
    repo.git.add("-A")
    if not repo.git.status("--porcelain"):
        return None
    repo.git.commit("-q", "-m", message)
    return str(repo.git.rev_parse("HEAD"))


def diff_since(repo: git.Repo, commit: str) -> str:
    """The binary patch from ``commit`` to the work tree as it is now (new files included)."""
    repo.git.add("-A")
    return str(repo.git.diff("--cached", "--binary", commit))
