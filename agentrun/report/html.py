"""One self-contained HTML page: styles, plotly.js and the figures' data inlined.

plotly.js is inlined, never loaded from a CDN, so the page opens from disk with no network. It is
the smallest of plotly.js's partial bundles that draws the page's traces ("basic": bar, pie,
scatter; "cartesian": those and box, ...; in ``vendor/``, from npm by
``scripts/vendor-plotly.sh``, the plotly.js version the installed plotly package bundles):
evaluating the full 4.8 MB ``plotly.min.js`` was most of a page's open time (2.8 s of 3.9 s here,
BENCHMARKS.md), basic evaluates in about a third of cartesian's time. A page with a trace outside
both gets the full bundle from the package (``plotly.offline.get_plotlyjs()``). It is embedded
gzip-compressed and base64-encoded (0.53, 0.66 or 1.96 MB) and unpacked in the browser with the
standard ``DecompressionStream``. Figures travel as one JSON
document in a ``<script type="application/json">`` tag with every ``<`` escaped, so text the
model wrote (hover labels, tool names) can never close the tag; the rest of the page goes
through jinja2 with autoescaping.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Any

import jinja2
import plotly.graph_objects as go
import plotly.offline
from plotly.io.json import to_json_plotly


@dataclass(frozen=True)
class Plot:
    """One figure on a page: the ``div`` id it renders into, a title and the plotly figure."""

    id: str
    title: str
    figure: go.Figure
    note: str = ""
    wide: bool = False  # spans the page's full width (many subplots side by side)


# The partial bundles in vendor/, smallest first, with their trace modules (their READMEs).
BUNDLES: tuple[tuple[str, frozenset[str]], ...] = (
    ("basic", frozenset({"bar", "pie", "scatter"})),
    (
        "cartesian",
        frozenset({"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour"})
        | {"image", "pie", "scatter", "scatterternary", "violin"},
    ),
)


def bundle_for(plots: list[Plot]) -> str:
    """The smallest plotly.js bundle that draws every trace on the page; "full" if none does."""
    types = {trace.type for p in plots for trace in p.figure.data}
    return next((name for name, traces in BUNDLES if types <= traces), "full")


@functools.cache
def plotly_js_gzip_b64(bundle: str) -> str:
    """A plotly.js bundle gzip-compressed and base64-encoded (once per process): a vendored
    partial bundle, or ("full") the plotly.min.js of the installed package."""
    if bundle == "full":
        packed = gzip.compress(plotly.offline.get_plotlyjs().encode("utf-8"), compresslevel=9, mtime=0)
    else:
        packed = (
            resources.files("agentrun.report").joinpath("vendor", f"plotly-{bundle}.min.js.gz").read_bytes()
        )
    return base64.b64encode(packed).decode("ascii")


def asset(name: str) -> str:
    """A file of ``templates/`` (a script or a stylesheet inlined into a page)."""
    return resources.files("agentrun.report").joinpath("templates", name).read_text(encoding="utf-8")


@functools.cache
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("agentrun.report", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = format_number
    return env


def format_number(value: Any, digits: int = 3) -> str:
    """Numbers for tables: ints as ints, floats with ``digits`` significant digits, None as a dash."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and abs(value) >= 1):
        return f"{int(value):,}"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 10**digits else f"{value:.{digits}g}"
    return str(value)


def figures_json(plots: list[Plot]) -> str:
    """All figures as one JSON object keyed by div id, safe inside a ``<script>`` element."""
    data = {p.id: p.figure.to_plotly_json() for p in plots}
    text = to_json_plotly(data).replace("<", "\\u003c")  # no "</script>" can end the element
    # U+2028/U+2029 are line ends in a script before ES2019: escaped, as "<" is
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def base_layout(**extra: Any) -> dict[str, Any]:
    """The layout every figure shares: compact margins, legend on top, white background."""
    layout: dict[str, Any] = {
        "template": "plotly_white",
        "margin": {"l": 60, "r": 20, "t": 30, "b": 50},
        "legend": {"orientation": "h", "y": 1.12, "x": 0},
        "height": 360,
    }
    layout.update(extra)
    return layout


def render(template: str, *, title: str, plots: list[Plot], context: Mapping[str, Any]) -> str:
    """The whole page as a string."""
    return (
        _environment()
        .get_template(template)
        .render(
            title=title,
            plots=plots,
            figures_json=figures_json(plots),
            plotly_gz=plotly_js_gzip_b64(bundle_for(plots)),
            style=asset("style.css"),
            boot=asset("boot.js"),
            **context,
        )
    )


def dumps_compact(value: Any) -> str:
    """JSON for a ``<pre>`` block: indented, non-ASCII kept."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)
