// The inspector page. Every piece of data reaches the DOM as a text node or through
// textContent: no HTML is ever parsed from what the API returns.
"use strict";

const state = { agent: null, key: null, tab: "transcript", offset: 0, source: null, turn: null, breakTurn: null };

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  if (props) {
    for (const [name, value] of Object.entries(props)) {
      if (value === undefined || value === null || value === false) continue;
      if (name === "class") node.className = value;
      else if (name === "onclick") node.addEventListener("click", value);
      else if (name === "title") node.title = String(value);
      else if (name === "hidden") node.hidden = true;
      else node.setAttribute(name, String(value));
    }
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function clear(node) { while (node.firstChild) node.firstChild.remove(); return node; }
const $ = (id) => document.getElementById(id);
const fmt = (n) => (n === undefined || n === null ? "" : Number(n).toLocaleString("en-US"));
const tok = (chars) => Math.ceil((chars || 0) / 4);
function when(ms) {
  if (!ms) return "";
  const d = new Date(ms);
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
}

async function api(path, params) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) if (v !== undefined && v !== null) query.set(k, v);
  const response = await fetch(path + (query.toString() ? "?" + query : ""), { credentials: "same-origin" });
  const body = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function status(text) { $("status").textContent = text; }

// ---- agents and sessions ----

async function loadAgents() {
  const { agents } = await api("/api/agents");
  const box = clear($("agents"));
  box.append(el("h2", null, "Agents"));
  for (const a of agents) {
    box.append(el("div", { class: "agent" },
      el("strong", null, a.id), a.is_default ? el("span", { class: "badge" }, "default") : null,
      el("div", { class: "meta" }, [a.model || "no model", a.runtime].join(" · "))));
  }
}

// The list shows pages of the most recently active sessions; a refresh asks again for what
// is shown, with the version of the last answer, and redraws nothing when nothing changed.
const SESSIONS_PAGE = 50;
const sessionsView = { shown: SESSIONS_PAGE, version: null, query: "" };

async function loadSessions(options) {
  const q = $("search").value.trim();
  if (q !== sessionsView.query) { sessionsView.query = q; sessionsView.shown = SESSIONS_PAGE; sessionsView.version = null; }
  if (options && options.more) { sessionsView.shown += SESSIONS_PAGE; sessionsView.version = null; }
  if (options && options.force) sessionsView.version = null;
  const answer = await api("/api/sessions", {
    q: q || undefined, limit: Math.min(sessionsView.shown, 1000), since: sessionsView.version || undefined,
  });
  if (answer.unchanged) return;
  sessionsView.version = answer.version;
  drawSessions(answer, q);
}

function drawSessions({ sessions, total }, q) {
  const box = clear($("sessions"));
  box.append(el("h2", null, `Sessions (${fmt(total)})`));
  for (const s of sessions) {
    const selected = s.agent_id === state.agent && s.key === state.key;
    box.append(el("button", {
      type: "button",
      class: "session" + (selected ? " selected" : ""),
      "data-key": s.key,
      "data-agent": s.agent_id,
      onclick: () => openSession(s.agent_id, s.key),
    },
      el("div", { class: "key" }, s.key, s.running ? el("span", { class: "badge running" }, "running") : null),
      el("div", { class: "meta" },
        `${s.agent_id} · last activity ${when(s.last_activity)}`),
      el("div", { class: "meta" },
        `${fmt(s.total_tokens)} tokens (in ${fmt(s.input_tokens)}, out ${fmt(s.output_tokens)}) · ` +
        `${fmt(s.compactions)} compaction${s.compactions === 1 ? "" : "s"}` +
        (s.display_name ? ` · ${s.display_name}` : "") + (s.channel ? ` · ${s.channel}` : ""))));
  }
  if (!sessions.length) box.append(el("div", { class: "agent muted" }, q ? "No session matches." : "No sessions yet."));
  performance.mark("sessions-drawn");
  if (total > sessions.length && sessionsView.shown < 1000) {
    box.append(el("button", { type: "button", class: "link more-sessions", onclick: () => loadSessions({ more: true }).catch(showError) },
      `Show ${Math.min(SESSIONS_PAGE, total - sessions.length)} more of ${fmt(total - sessions.length)}`));
  } else if (total > sessions.length) {
    box.append(el("div", { class: "agent muted" }, `${fmt(total - sessions.length)} more: search to narrow the list.`));
  }
}

// ---- one session ----

function openSession(agent, key) {
  location.hash = "#" + new URLSearchParams({ agent, key, tab: state.tab }).toString();
}

function route() {
  const params = new URLSearchParams(location.hash.slice(1));
  const agent = params.get("agent");
  const key = params.get("key");
  const tab = params.get("tab") || "transcript";
  if (!key) { $("session").hidden = true; $("empty").hidden = false; return; }
  const changed = agent !== state.agent || key !== state.key;
  state.agent = agent; state.key = key; state.tab = tab;
  $("empty").hidden = true; $("session").hidden = false;
  for (const b of document.querySelectorAll(".tab")) b.classList.toggle("active", b.dataset.tab === tab);
  for (const id of ["transcript", "layers", "cache"]) $(id).hidden = id !== tab;
  if (changed) {
    clear($("live"));
    clear($("approvals")).hidden = true;
    clear($("session-head"));
    state.transcriptTotal = null;
    loadHead().catch(showError);
    watch();
    loadApprovals().catch(showError);
    loadSessions({ force: true }).catch(showError);
    state.turn = null; state.breakTurn = null;
  }
  if (tab === "transcript") loadTranscript().catch(showError);
  if (tab === "layers") loadLayers().catch(showError);
  if (tab === "cache") loadCache().catch(showError);
}

function showError(error) { status("Error: " + error.message); }

function sessionHead(s) {
  clear($("session-head")).append(
    el("h2", null, s.key),
    el("div", { class: "meta" },
      `agent ${s.agent_id} · session ${s.session_id} · created ${when(s.created_at)} · last activity ${when(s.last_activity)}`),
    el("div", { class: "meta" },
      `${fmt(s.total_tokens)} tokens · ${fmt(s.compactions)} compactions` + (s.running ? " · running now" : "")));
}

async function loadHead() {
  const { agent, key } = state;
  const { session } = await api("/api/session", { agent: agent || undefined, key });
  if (agent === state.agent && key === state.key) sessionHead(session);
}

// ---- transcript ----

async function loadTranscript(older) {
  const params = { agent: state.agent, key: state.key, limit: 100 };
  if (older) params.offset = older;
  const page = await api("/api/transcript", params);
  sessionHead(page.session);
  state.transcriptTotal = page.total;
  const box = $("transcript");
  if (!older) clear(box);
  const list = el("div", { class: "entries" });
  for (const item of page.entries) list.append(renderEntry(item.index, item.entry, list, box));
  pairResults(list, box);
  const older_button = box.querySelector(".pager");
  if (older_button) older_button.remove();
  if (older) box.prepend(list); else box.append(list);
  if (page.offset > 0) {
    const from = Math.max(0, page.offset - page.limit);
    box.prepend(el("div", { class: "pager" },
      el("button", { type: "button", class: "link", onclick: () => loadTranscriptRange(from, page.offset - from) },
        `Load ${page.offset - from} older entries`),
      el("span", { class: "muted entry-count", "data-first": page.offset + 1 }, ` showing ${page.offset + 1}–${page.total} of ${page.total}`)));
  } else if (!older) {
    box.prepend(el("div", { class: "pager muted" }, el("span", { class: "entry-count" }, `${page.total} entries`)));
  }
  if (page.report && (page.report.bad_lines || page.report.torn_tail)) {
    box.prepend(el("div", { class: "entry error" },
      `The transcript file has ${page.report.bad_lines} unreadable line(s)` + (page.report.torn_tail ? " and a torn last line" : "")));
  }
}

// After a run: only the entries it added are fetched and appended, so the older pages the
// reader loaded stay. A transcript that shrank (a reset) is loaded again from its end.
async function loadTranscriptTail() {
  const { agent, key } = state;
  const from = state.transcriptTotal;
  if (from === null || from === undefined) return loadTranscript();
  const page = await api("/api/transcript", { agent, key, offset: from, limit: 500 });
  if (agent !== state.agent || key !== state.key) return;
  if (page.total < from) return loadTranscript();
  sessionHead(page.session);
  const box = $("transcript");
  if (page.entries.length) {
    const list = el("div", { class: "entries" });
    for (const item of page.entries) list.append(renderEntry(item.index, item.entry, list, box));
    pairResults(list, box);
    box.append(list);
  }
  state.transcriptTotal = from + page.entries.length;
  const count = box.querySelector(".entry-count");
  const all = state.transcriptTotal;
  if (count) count.textContent = count.dataset.first ? ` showing ${count.dataset.first}–${all} of ${all}` : `${all} entries`;
  if (page.total > state.transcriptTotal) return loadTranscriptTail();
}

async function loadTranscriptRange(offset, limit) {
  const page = await api("/api/transcript", { agent: state.agent, key: state.key, offset, limit });
  const box = $("transcript");
  const list = el("div", { class: "entries" });
  for (const item of page.entries) list.append(renderEntry(item.index, item.entry, list, box));
  pairResults(list, box);
  const pager = box.querySelector(".pager");
  if (pager) pager.remove();
  box.prepend(list);
  if (page.offset > 0) {
    const from = Math.max(0, page.offset - limit);
    box.prepend(el("div", { class: "pager" },
      el("button", { type: "button", class: "link", onclick: () => loadTranscriptRange(from, page.offset - from) },
        `Load ${page.offset - from} older entries`)));
  }
}

function blocksOf(content) {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content : [];
}

function renderBlock(block) {
  switch (block.type) {
    case "text": return el("div", { class: "text" }, block.text);
    case "thinking": return el("div", { class: "thinking" }, block.thinking);
    case "toolCall":
      return el("div", { class: "tool-call", "data-call-id": block.id },
        el("div", null, "tool call ", el("span", { class: "name" }, block.name), el("span", { class: "muted" }, ` (${block.id})`)),
        el("pre", null, JSON.stringify(block.arguments, null, 2)),
        el("div", { class: "tool-result muted" }, "no result yet"));
    case "image": return el("div", { class: "muted" }, `image (${block.mimeType || "?"}): ${block.data}`);
    default: return el("pre", null, JSON.stringify(block, null, 2));
  }
}

function renderEntry(index, entry, list) {
  const at = entry.timestamp ? ` · ${entry.timestamp}` : "";
  if (entry.type === "message") {
    const m = entry.message || {};
    if (m.role === "user") {
      return el("div", { class: "entry user", "data-index": index },
        el("div", { class: "who" }, `#${index} user${at}`), blocksOf(m.content).map(renderBlock));
    }
    if (m.role === "assistant") {
      const failed = m.stopReason === "error" || m.stopReason === "aborted";
      const u = m.usage;
      return el("div", { class: "entry assistant" + (failed ? " error" : ""), "data-index": index },
        el("div", { class: "who" }, `#${index} assistant · ${m.provider}/${m.model} · ${m.stopReason}${at}`),
        blocksOf(m.content).map(renderBlock),
        m.errorMessage ? el("div", { class: "text" }, "error: " + m.errorMessage) : null,
        u ? el("div", { class: "usage" },
          `in ${fmt(u.input)} · out ${fmt(u.output)} · cache read ${fmt(u.cacheRead)} · cache write ${fmt(u.cacheWrite)}`) : null);
    }
    if (m.role === "toolResult") {
      const node = el("div", { class: "entry other tool-result-entry", "data-result-for": m.toolCallId, "data-index": index },
        el("div", { class: "who" }, `#${index} result of ${m.toolName} (${m.toolCallId})${m.isError ? " · error" : ""}${at}`),
        el("pre", { class: "tool-result" + (m.isError ? " error" : "") }, blocksOf(m.content).map((b) => b.text !== undefined ? b.text : JSON.stringify(b)).join("\n")));
      return node;
    }
    return el("div", { class: "entry other", "data-index": index },
      el("div", { class: "who" }, `#${index} ${m.role}${at}`), el("pre", null, JSON.stringify(m, null, 2)));
  }
  if (entry.type === "compaction") {
    return el("div", { class: "entry compaction", "data-index": index },
      el("div", { class: "who" }, `#${index} compaction · ${fmt(entry.tokensBefore)} tokens before · first kept ${entry.firstKeptEntryId}${at}`),
      el("div", { class: "text" }, entry.summary));
  }
  const rest = Object.assign({}, entry);
  delete rest.id; delete rest.parentId; delete rest.timestamp;
  return el("div", { class: "entry other", "data-index": index },
    el("div", { class: "who" }, `#${index} ${entry.type}${entry.customType ? " " + entry.customType : ""}${at}`),
    el("pre", null, JSON.stringify(rest, null, 2)));
}

// Moves each tool result under its call when both are shown.
function pairResults(list, box) {
  for (const result of list.querySelectorAll("[data-result-for]")) {
    const id = result.getAttribute("data-result-for");
    const call = [...box.querySelectorAll(".tool-call"), ...list.querySelectorAll(".tool-call")]
      .find((c) => c.getAttribute("data-call-id") === id);
    if (!call) continue;
    const slot = call.querySelector(".tool-result");
    const pre = result.querySelector("pre");
    slot.replaceWith(el("div", null, el("div", { class: "muted" }, result.querySelector(".who").textContent), pre));
    result.remove();
  }
}

// ---- exec approvals (read-only: deciding is for the CLI, chat or the API) ----

// A command is model output a person is asked about: characters that would hide, reorder or
// break its text (controls, bidi overrides and isolates, zero-width ones) are shown as escapes.
function visible(text) {
  return String(text || "").replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g,
    (c) => "\\u{" + c.codePointAt(0).toString(16) + "}");
}

async function loadApprovals() {
  const { agent, key } = state;
  const { approvals } = await api("/api/approvals", { agent: agent || undefined, key });
  if (agent !== state.agent || key !== state.key) return; // another session opened meanwhile
  const box = clear($("approvals"));
  box.hidden = approvals.length === 0;
  if (!approvals.length) return;
  const pending = approvals.filter((a) => a.state === "pending").length;
  const rows = approvals.map((a) => {
    const last = a.state === "pending"
      ? `expires ${when(a.expires_at_ms)}`
      : when(a.decided_at_ms) + (a.decided_by ? ` by ${visible(a.decided_by)}` : "");
    return el("tr", { class: "approval " + a.state.replace(/ /g, "-"), "data-approval-id": a.id, "data-state": a.state },
      el("td", { class: "mono" }, a.id),
      el("td", null, a.state + (a.state === "expired" ? (a.fallback_allowed ? " (ran)" : " (refused)") : "")),
      el("td", { class: "mono command" }, visible(a.command)),
      el("td", null, visible(a.reason)),
      el("td", null, last));
  });
  box.append(
    el("h3", null, `Exec approvals · ${pending} pending`),
    el("div", { class: "muted" }, "Decide with `openclaw approvals approve|deny ID`, /approve in chat, or ResolveApproval."),
    el("table", null,
      el("thead", null, el("tr", null, ["id", "state", "command", "reason", "expires / decided"].map((h) => el("th", null, h)))),
      el("tbody", null, rows)));
}

// ---- live events ----

function watch() {
  if (state.source) state.source.close();
  const query = new URLSearchParams({ agent: state.agent || "", key: state.key });
  const source = new EventSource("/api/events?" + query);
  state.source = source;
  let run = null;
  const live = $("live");
  const line = (text) => run && run.lines.append(el("div", { class: "line" }, text));
  // One box per run: a run already going when the page opened gets its box from the
  // greeting, and its own "started" (if the two crossed) fills in the same box.
  const open = (number, detail) => {
    const existing = live.querySelector(`[data-run="${number}"]`);
    if (existing && run && run.box === existing) {
      run.head.replaceChildren(el("strong", null, `Run ${number} live`), el("span", { class: "muted" }, detail));
      return;
    }
    const reply = el("div", { class: "reply" });
    const lines = el("div");
    const head = el("div", null, el("strong", null, `Run ${number} live`), el("span", { class: "muted" }, detail));
    const box = el("div", { class: "live-run", "data-run": number }, head, lines, reply);
    run = { box, reply, lines, head };
    live.prepend(box);
    while (live.children.length > 3) live.lastChild.remove();
  };
  source.addEventListener("watching", (e) => {
    const d = e.data ? JSON.parse(e.data) : {};
    status("watching for runs");
    if (d.active_run !== null && d.active_run !== undefined) {
      open(d.active_run, " · already running when this page opened; what it said before is in the transcript once it ends");
    }
  });
  source.addEventListener("started", (e) => {
    const d = JSON.parse(e.data);
    open(d.run, ` · ${d.model} · messages ${d.message_seqs.join(", ")}`);
    loadSessions().catch(showError);
    loadHead().catch(showError);
  });
  source.addEventListener("model_call", (e) => {
    const d = JSON.parse(e.data);
    line(`model call ${d.step} · prompt ${fmt(d.prompt_chars)} chars · ${d.messages} messages · stable prefix ${d.stable_prefix_sha256.slice(0, 12)}` +
      (d.prefix_changed ? ` changed (${d.changed_sections.join(", ")})` : ""));
  });
  source.addEventListener("text", (e) => { if (run) run.reply.append(document.createTextNode(JSON.parse(e.data).text)); });
  source.addEventListener("tool_started", (e) => { const d = JSON.parse(e.data); line(`tool ${visible(d.summary || d.name)} started`); });
  source.addEventListener("tool_finished", (e) => {
    const d = JSON.parse(e.data);
    line(`tool ${d.name} finished in ${d.duration_ms} ms${d.is_error ? " with an error" : ""}`);
  });
  source.addEventListener("compaction", (e) => { const d = JSON.parse(e.data); line(`compaction ${d.phase} (${d.trigger})`); });
  source.addEventListener("message_rejected", (e) => { const d = JSON.parse(e.data); line(`message ${d.seq} not answered: ${d.reason}`); });
  source.addEventListener("handoff", (e) => { const d = JSON.parse(e.data); line(`${d.messages} message(s) handed to run ${d.next_run}`); });
  source.addEventListener("lagged", (e) => line(`missed ${JSON.parse(e.data).missed} events`));
  source.addEventListener("approval_requested", (e) => {
    const d = JSON.parse(e.data);
    line(`approval ${d.id} needed to run: ${visible(d.command)}`);
    loadApprovals().catch(showError);
  });
  source.addEventListener("approval_resolved", (e) => {
    const d = JSON.parse(e.data);
    line(`approval ${d.id}: ${d.state}` + (d.decided_by ? ` by ${visible(d.decided_by)}` : ""));
    loadApprovals().catch(showError);
  });
  const finished = () => {
    loadSessions().catch(showError);
    loadHead().catch(showError);
    if (state.tab === "transcript") loadTranscriptTail().catch(showError);
    if (state.tab === "layers") loadLayers().catch(showError);
    if (state.tab === "cache") loadCache().catch(showError);
  };
  source.addEventListener("final", (e) => {
    const d = JSON.parse(e.data);
    line(`finished · ${d.steps} model call(s) · ${d.stop_reason}`);
    if (run) run.box.classList.add("done");
    finished();
  });
  source.addEventListener("error", (e) => {
    if (!e.data) return; // the connection itself: EventSource reconnects
    const d = JSON.parse(e.data);
    line(`failed: ${d.code}: ${d.message}`);
    if (run) run.box.classList.add("failed");
    finished();
  });
}

// ---- prompt layers ----

async function loadLayers() {
  const box = $("layers");
  const { turns } = await api("/api/turns", { agent: state.agent, key: state.key });
  const known = turns.filter((t) => t.has_prompt);
  if (state.turn === null && known.length) state.turn = known[known.length - 1].index;
  const select = el("select", { id: "turn-select" });
  select.append(el("option", { value: "next" }, "the next model call (preview)"));
  for (const t of known) {
    const option = el("option", { value: t.index }, `call ${t.index}: run ${t.run} step ${t.step} · ${when(t.at_ms)}`);
    if (t.index === state.turn) option.selected = true;
    select.append(option);
  }
  select.addEventListener("change", () => {
    state.turn = select.value === "next" ? "next" : Number(select.value);
    loadLayers().catch(showError);
  });
  const params = { agent: state.agent, key: state.key };
  if (state.turn !== null && state.turn !== "next") params.turn = state.turn;
  const report = await api("/api/layers", params);
  clear(box).append(el("div", null, "Prompt of ", select,
    el("span", { class: "muted" }, ` · ${report.model}` + (turns.length ? "" : " · no model call observed since the inspector started"))));
  box.append(drawLayers(report.layers));
}

function drawLayers(l) {
  const out = el("div", { class: "layers-view" });
  const total = Math.max(1, l.stable_chars + l.dynamic_chars);
  out.append(el("h3", null, `${fmt(l.chars)} characters (~${fmt(l.approx_tokens)} tokens) · mode ${l.mode}`));
  const split = el("div", { class: "bar split" });
  const stable = el("div", { class: "seg stable", title: `stable ${l.stable_chars} chars` });
  stable.style.width = (100 * l.stable_chars / total) + "%";
  const dynamic = el("div", { class: "seg dynamic", title: `dynamic ${l.dynamic_chars} chars` });
  dynamic.style.width = (100 * l.dynamic_chars / total) + "%";
  split.append(stable, dynamic);
  out.append(el("div", { class: "legend" },
    el("span", { class: "swatch stable" }), `stable prefix ${fmt(l.stable_chars)} chars (cached; sha256 ${l.stable_prefix_sha256.slice(0, 16)}…)`,
    el("span", { class: "swatch dynamic" }), `dynamic suffix ${fmt(l.dynamic_chars)} chars (per turn)`), split);

  out.append(el("h3", null, "Sections by position (width = size)"));
  const bar = el("div", { class: "bar sections" });
  for (const s of l.sections) {
    const seg = el("div", { class: "seg " + s.layer, title: `${s.id} · ${s.layer} · ${s.chars} chars`, "data-section": s.id });
    seg.style.width = (100 * s.chars / total) + "%";
    bar.append(seg);
  }
  out.append(bar);
  const biggest = Math.max(1, ...l.sections.map((s) => s.chars));
  const table = el("table", { class: "sections-table" },
    el("tr", null, el("th", null, "section"), el("th", null, "heading"), el("th", null, "layer"),
      el("th", { class: "num" }, "chars"), el("th", { class: "num" }, "~tokens"), el("th", null, "")));
  for (const s of [...l.sections].sort((a, b) => b.chars - a.chars)) {
    const meter = el("div", { class: "meter " + s.layer });
    meter.style.width = (100 * s.chars / biggest) + "%";
    const id = typeof s.text === "string"
      ? el("details", null, el("summary", null, s.id), el("pre", { class: "section-text" }, s.text))
      : s.id;
    table.append(el("tr", null, el("td", { class: "mono" }, id), el("td", null, s.heading), el("td", null, s.layer),
      el("td", { class: "num" }, fmt(s.chars)), el("td", { class: "num" }, fmt(tok(s.chars))), el("td", { class: "meter-cell" }, meter)));
  }
  out.append(table);

  const b = l.bootstrap;
  out.append(el("h3", null, `Bootstrap files · project context ${fmt(b.project_context_chars)} chars · limits ${fmt(b.max_chars_per_file)} per file, ${fmt(b.total_max_chars)} in total`));
  const files = el("table", { class: "files-table" },
    el("tr", null, el("th", null, "file"), el("th", null, "status"), el("th", null, "layer"),
      el("th", { class: "num" }, "raw chars"), el("th", { class: "num" }, "injected chars"), el("th", { class: "num" }, "cut by a limit")));
  for (const f of b.files) {
    files.append(el("tr", null, el("td", { class: "mono" }, f.path),
      el("td", { class: "status-" + f.status }, f.status + (f.cause ? ` (${f.cause.replaceAll("_", " ")})` : "")),
      el("td", null, f.layer), el("td", { class: "num" }, fmt(f.raw_chars)), el("td", { class: "num" }, fmt(f.injected_chars)),
      el("td", { class: "num" }, ["truncated", "omitted"].includes(f.status) ? fmt(f.raw_chars - f.injected_chars) : "")));
  }
  out.append(files);

  const sk = l.skills;
  out.append(el("h3", null, `Skills · ${fmt(sk.chars)} chars (~${fmt(tok(sk.chars))} tokens) · ${sk.listed} of ${sk.offered} listed` +
    (sk.omitted.length ? ` · not listed: ${sk.omitted.join(", ")}` : "")));
  const skills = el("table", null, el("tr", null, el("th", null, "skill"), el("th", null, "version"), el("th", { class: "num" }, "chars")));
  for (const s of [...sk.entries].sort((a, b) => b.block_chars - a.block_chars)) {
    skills.append(el("tr", null, el("td", { class: "mono" }, s.name), el("td", { class: "mono" }, s.version), el("td", { class: "num" }, fmt(s.block_chars))));
  }
  out.append(skills);

  const t = l.tools;
  out.append(el("h3", null, `Tools · list ${fmt(t.list_chars)} chars · schemas ${fmt(t.schema_chars)} chars (~${fmt(tok(t.schema_chars))} tokens)`));
  const tools = el("table", { class: "tools-table" }, el("tr", null, el("th", null, "tool"), el("th", { class: "num" }, "summary chars"),
    el("th", { class: "num" }, "schema chars"), el("th", { class: "num" }, "properties")));
  for (const x of [...t.entries].sort((a, b) => b.schema_chars - a.schema_chars)) {
    tools.append(el("tr", null, el("td", { class: "mono" }, x.name), el("td", { class: "num" }, fmt(x.summary_chars)),
      el("td", { class: "num" }, fmt(x.schema_chars)), el("td", { class: "num" }, fmt(x.properties_count))));
  }
  out.append(tools);
  return out;
}

// ---- cache breaks ----

async function loadCache() {
  const box = $("cache");
  const { turns } = await api("/api/turns", { agent: state.agent, key: state.key });
  clear(box);
  if (!turns.length) {
    box.append(el("div", { class: "muted" }, "No model call of this session was observed since the inspector started."));
    return;
  }
  const table = el("table", { class: "turns-table" }, el("tr", null, el("th", null, "call"), el("th", null, "when"), el("th", null, "run / step"),
    el("th", null, "stable prefix"), el("th", null, "cache"), el("th", null, "changed sections"), el("th", { class: "num" }, "cache read")));
  for (const t of turns) {
    const broke = t.hash_changed || t.prefix_changed;
    const row = el("tr", { class: "turn-row" + (t.index === state.breakTurn ? " selected" : ""), "data-turn": t.index,
      onclick: () => { state.breakTurn = t.index; loadCache().catch(showError); } },
      el("td", null, String(t.index)), el("td", null, when(t.at_ms)), el("td", null, `${t.run} / ${t.step}`),
      el("td", { class: "hash" }, t.stable_prefix_sha256.slice(0, 16)),
      el("td", null, el("span", { class: "badge " + (broke ? "changed" : "same") }, broke ? "prefix changed" : "same prefix")),
      el("td", { class: "mono" }, t.changed_sections.join(", ")),
      el("td", { class: "num" }, t.usage ? fmt(t.usage.cacheRead) : ""));
    table.append(row);
  }
  box.append(el("h3", null, "Model calls, oldest first (choose one to compare it with the call before)"), table);
  if (state.breakTurn === null) {
    const last = [...turns].reverse().find((t) => t.hash_changed || t.prefix_changed);
    state.breakTurn = last ? last.index : null;
    if (state.breakTurn !== null) for (const r of table.querySelectorAll("[data-turn]")) r.classList.toggle("selected", Number(r.dataset.turn) === state.breakTurn);
  }
  if (state.breakTurn === null) { box.append(el("div", { class: "muted" }, "No cache break among these calls.")); return; }
  const cb = await api("/api/cache-break", { agent: state.agent, key: state.key, turn: state.breakTurn });
  box.append(drawBreak(cb));
}

function drawBreak(cb) {
  const out = el("div", { class: "break" });
  if (cb.previous_index === null) {
    out.append(el("div", { class: "muted" }, cb.note));
    return out;
  }
  out.append(el("div", null, `Call ${cb.index} against call ${cb.previous_index}: `,
    el("span", { class: "badge " + (cb.hash_changed ? "changed" : "same") }, cb.hash_changed ? "stable prefix hash changed" : "stable prefix unchanged")),
    el("div", { class: "hash" }, `${cb.previous_sha256} → ${cb.sha256}`));
  if (cb.first_changed) out.append(el("div", { class: "first" }, `The cached prefix breaks at section ${cb.first_changed}`));
  if (cb.note) out.append(el("div", { class: "muted" }, cb.note));
  for (const s of cb.sections) {
    out.append(el("h3", null, `${s.id} · ${s.change}` + (s.old_chars !== undefined && s.old_chars !== null ? ` · ${fmt(s.old_chars)} → ${fmt(s.new_chars)} chars` : "")));
    if (!s.diff) { out.append(el("div", { class: "muted" }, "no text to compare")); continue; }
    const table = el("table", { class: "diff", "data-section": s.id },
      el("tr", null, el("th", { class: "ln" }, ""), el("th", null, `call ${cb.previous_index}`), el("th", { class: "ln" }, ""), el("th", null, `call ${cb.index}`)));
    for (const r of s.diff) {
      if (r.kind === "gap") { table.append(el("tr", { class: "gap" }, el("td", { colspan: 4 }, "⋯ unchanged lines ⋯"))); continue; }
      table.append(el("tr", { class: r.kind },
        el("td", { class: "ln" }, r.old_line || ""), el("td", { class: "old" }, r.old === undefined ? "" : r.old),
        el("td", { class: "ln" }, r.new_line || ""), el("td", { class: "new" }, r.new === undefined ? "" : r.new)));
    }
    out.append(table);
  }
  return out;
}

// ---- start ----

function start() {
  for (const b of document.querySelectorAll(".tab")) {
    b.addEventListener("click", () => {
      const params = new URLSearchParams(location.hash.slice(1));
      params.set("tab", b.dataset.tab);
      state.tab = b.dataset.tab;
      location.hash = "#" + params.toString();
    });
  }
  let pending = null;
  $("search").addEventListener("input", () => {
    clearTimeout(pending);
    pending = setTimeout(() => loadSessions().catch(showError), 200);
  });
  window.addEventListener("hashchange", route);
  loadAgents().catch(showError);
  loadSessions().catch(showError);
  route();
  setInterval(() => loadSessions().catch(() => {}), 5000);
}

start();
