"""Which page a set of folders gets, assembled from the page modules."""

from __future__ import annotations

from pathlib import Path

from agentrun.errors import UserError
from agentrun.report import compare_page, gateway_page, load_page, run_page
from agentrun.report.html import render
from agentrun.report.sources import Kind, read_compare, read_gateway, read_load, read_run


def build(kind: Kind, paths: list[Path], out_dir: Path) -> str:
    if kind == "run" and len(paths) == 1:
        run = read_run(paths[0])
        r = run.result
        title = f"{r.task} · {r.mode} · {'passed' if r.passed else 'not passed'}"
        return render(
            "run.html.j2",
            title=title,
            plots=run_page.plots(run),
            context={"kind": "run", **run_page.context(run, out_dir)},
        )
    if kind in ("run", "compare"):
        groups = (
            compare_page.groups_of_runs([read_run(p) for p in paths])
            if kind == "run"
            else compare_page.groups_of_compares([read_compare(p) for p in paths])
        )
        view = compare_page.view(groups, out_dir)
        return render(
            "compare.html.j2",
            title=view["page_title"],
            plots=compare_page.plots(groups),
            context={"kind": "compare", **view},
        )
    if kind == "gateway":
        if len(paths) > 1:
            raise UserError("one gateway folder per page: give one")
        gateway = read_gateway(paths[0])
        return render(
            "gateway.html.j2",
            title=f"gateway: {gateway.folder.name}",
            plots=gateway_page.plots(gateway),
            context={"kind": "gateway", **gateway_page.context(gateway, out_dir)},
        )
    if kind == "job":
        return _job_page(paths, out_dir)
    loads = [read_load(p) for p in paths]
    return render(
        "load.html.j2",
        title=load_page.title(loads),
        plots=load_page.plots(loads),
        context={"kind": "load", **load_page.context(loads, out_dir)},
    )


def _job_page(paths: list[Path], out_dir: Path) -> str:
    from agentrun.report import job_page

    if len(paths) != 1:
        raise UserError("one job folder per page (agentrun report JOB_DIR)")
    job = job_page.read_job(paths[0])
    return render(
        "job.html.j2",
        title=job_page.title(job),
        plots=job_page.plots(job),
        context={"kind": "job", **job_page.context(job, out_dir)},
    )
