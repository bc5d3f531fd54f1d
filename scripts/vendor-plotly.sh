#!/usr/bin/env bash
# Refresh agentrun/report/vendor/: plotly.js's partial bundles "basic" (bar, pie, scatter) and
# "cartesian" (those and box, heatmap, histogram, ...) from the npm registry, gzipped.
# Its version follows the plotly.js that the installed plotly (pip) bundles, so figures built by
# plotly.py are read by the same plotly.js. Why a partial bundle: evaluating the full 4.8 MB
# plotly.min.js is most of a page's open time (BENCHMARKS.md, "Report page"); basic evaluates in
# about a third of cartesian's time.
set -euo pipefail
cd "$(dirname "$0")/.."
version="$(.venv/bin/python -c 'import re, plotly.offline as o; print(re.search(r"plotly.js v([0-9.]+)", o.get_plotlyjs()[:400]).group(1))')"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
for bundle in basic cartesian; do
  rm -rf "$tmp/package"
  (cd "$tmp" && npm pack --silent "plotly.js-$bundle-dist-min@$version" >/dev/null && tar xzf "plotly.js-$bundle-dist-min-$version.tgz")
  gzip -9n < "$tmp/package/plotly-$bundle.min.js" > "agentrun/report/vendor/plotly-$bundle.min.js.gz"
done
cp "$tmp/package/LICENSE" agentrun/report/vendor/LICENSE-plotly.js
echo "$version" > agentrun/report/vendor/plotly.version
rm -f agentrun/report/vendor/plotly-cartesian.version
echo "vendored plotly.js-basic-dist-min and plotly.js-cartesian-dist-min $version" >&2
