// Unpack the inlined plotly.js (gzip, base64), then draw every figure. Sets
// document.body.dataset.ready to "1" when all are drawn ("error" if anything failed) and
// window.reportReadyMs to the time it took since navigation start: what the browser test and
// the benchmark wait for and measure (with the marks plotly-unpacked and plotly-evaluated).
function decodeBase64(text) {  // browsers without Uint8Array.fromBase64 (before 2025)
  const binary = atob(text.trim());
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

(async () => {
  const packed = document.getElementById("plotly-gz").textContent;
  const bytes = Uint8Array.fromBase64 ? Uint8Array.fromBase64(packed.trim()) : decodeBase64(packed);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  const source = await new Response(stream).text();
  performance.mark("plotly-unpacked");
  const script = document.createElement("script");
  script.textContent = source;
  document.head.appendChild(script);
  performance.mark("plotly-evaluated");
  const figures = JSON.parse(document.getElementById("figures").textContent);
  const config = { displaylogo: false, responsive: true };
  for (const [id, figure] of Object.entries(figures)) {
    const div = document.getElementById(id);
    await Plotly.newPlot(div, figure.data, figure.layout, config);
    // a point that carries its turn (customdata) opens that turn of the transcript
    div.on("plotly_click", (event) => {
      const turn = event.points[0]?.customdata;
      if (turn !== undefined && window.agentrunOpenTurn) window.agentrunOpenTurn(turn);
    });
    performance.mark(`drawn-${id}`);
  }
  window.reportReadyMs = performance.now();
  document.body.dataset.ready = "1";
})().catch((error) => {
  document.body.dataset.ready = "error";
  console.error("report: could not draw the figures:", error);
});
