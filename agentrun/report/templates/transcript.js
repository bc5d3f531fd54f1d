// The run's transcript: the page holds each turn's data as JSON (#transcript-data) and a closed
// <details> per turn; a turn is rendered the first time it is opened, so a long run opens as fast
// as a short one. Every string from the model, a tool or a task is set with textContent, never
// parsed as HTML. window.agentrunOpenTurn(n) opens turn n (plot points call it; so does #turn-n).
(() => {
  const holder = document.getElementById("transcript-data");
  if (!holder) return;
  const turns = new Map(JSON.parse(holder.textContent).map((t) => [String(t.turn), t]));
  const after = holder.closest("section")?.dataset.after || "what ran"; // a gateway's calls are returned, not run
  const FOLD_LINES = 12;
  const FOLD_CHARS = 1500;

  const el = (tag, cls, text) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  };
  const lineCount = (text) => text.split("\n").length;

  // A labelled value; past a few lines it is folded behind its first line.
  function value(label, text, cls, open) {
    const pre = el("pre", cls, text);
    if (lineCount(text) <= FOLD_LINES && text.length <= FOLD_CHARS) {
      const box = el("div", "item");
      if (label) box.append(el("div", "label", label));
      box.append(pre);
      return box;
    }
    const fold = el("details", "fold item");
    if (open) fold.open = true;
    const first = text.split("\n", 1)[0].slice(0, 120);
    fold.append(el("summary", null, `${label} (${lineCount(text)} lines, ${text.length} chars): ${first}`));
    fold.append(pre);
    return fold;
  }

  function diff(text, cls) {
    const pre = el("pre", `diff ${cls || ""}`);
    for (const line of text.split("\n")) {
      let kind = null;
      if (line.startsWith("@@")) kind = "hunk";
      else if (line.startsWith("+") && !line.startsWith("+++")) kind = "add";
      else if (line.startsWith("-") && !line.startsWith("---")) kind = "del";
      pre.append(el("span", kind, `${line}\n`));
    }
    return pre;
  }

  function figures(reply) {
    const parts = [];
    if (reply.ttft_s !== null) parts.push(`TTFT ${reply.ttft_s.toPrecision(3)} s`);
    parts.push(`prompt ${reply.prompt_tokens} tok`);
    if (reply.cached_tokens !== null) parts.push(`cached ${reply.cached_tokens}`);
    parts.push(`output ${reply.completion_tokens}`);
    if (reply.finish_reason) parts.push(`finish ${reply.finish_reason}`);
    return el("div", "figures", parts.join(" · "));
  }

  function renderReply(reply, index, count) {
    const box = el("div", reply.asked_again ? "reply reasked" : "reply");
    const head = count > 1 ? `reply ${index + 1} of ${count}` : "reply";
    box.append(el("div", "label", reply.asked_again ? `${head}: not used, asked again (${reply.asked_again})` : head));
    box.append(figures(reply));
    if (reply.reasoning) box.append(value("reasoning", reply.reasoning, "reasoning", false));
    if (reply.content) box.append(value("text", reply.content, "content", true));
    return box;
  }

  function renderCall(call) {
    const state = call.rejected ? "rejected" : call.error ? "error" : "ok";
    const box = el("div", `call ${state}${call.repairs.length ? " repaired" : ""}`);
    const kinds = call.repairs.map((r) => r.kind + (r.detail && r.detail !== r.kind ? ` (${r.detail})` : ""));
    let title = `${call.name}`;
    if (kinds.length) title += ` · repaired: ${kinds.join(", ")}`;
    if (call.rejected) title += ` · rejected: ${call.error || "not run"}`;
    box.append(el("div", "call-title", title));
    if (call.diff) {
      box.append(el("div", "label", `the model sent → ${after}`));
      box.append(diff(call.diff, "call-diff"));
    } else {
      box.append(value(call.ran ? "call" : "the model sent", call.ran || call.sent, "args", true));
    }
    const meta = [];
    if (call.exit_code !== null) meta.push(`exit code ${call.exit_code}`);
    if (call.duration_s !== null) meta.push(`${call.duration_s.toPrecision(3)} s`);
    if (call.error && !call.rejected) meta.push(`error: ${call.error}`);
    if (meta.length) box.append(el("div", "figures", meta.join(" · ")));
    if (call.output) box.append(value(call.rejected ? "feedback to the model" : "result", call.output, "output", call.rejected));
    return box;
  }

  function render(turn, body) {
    for (const m of turn.messages) body.append(value(m.role, m.content, `message ${m.role}`, false));
    turn.replies.forEach((r, i) => body.append(renderReply(r, i, turn.replies.length)));
    for (const c of turn.calls) body.append(renderCall(c));
    for (const n of turn.notes) body.append(el("div", "note", n));
    if (turn.files.length) {
      const fold = el("details", "fold workspace");
      fold.append(el("summary", null, `workspace: ${turn.files.join(", ")}`));
      fold.append(diff(turn.workspace_diff, "workspace-diff"));
      body.append(fold);
    }
  }

  function ensure(details) {
    const body = details.querySelector(".turn-body");
    if (body.dataset.rendered) return;
    body.dataset.rendered = "1";
    const turn = turns.get(details.dataset.turn);
    if (turn) render(turn, body);
  }

  for (const details of document.querySelectorAll("details.turn")) {
    details.addEventListener("toggle", () => details.open && ensure(details));
  }
  window.agentrunOpenTurn = (n) => {
    const details = document.getElementById(`turn-${n}`);
    if (!details) return false;
    ensure(details);
    details.open = true;
    details.scrollIntoView({ block: "start" });
    return true;
  };
  const fromHash = () => {
    const m = /^#turn-(\d+)$/.exec(location.hash);
    if (m) window.agentrunOpenTurn(m[1]);
  };
  window.addEventListener("hashchange", fromHash);
  fromHash();
})();
