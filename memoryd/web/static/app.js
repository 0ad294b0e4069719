// memoryd's page: one more client of the daemon's RPC methods (POST /api/<method>, the schema's named parameters).
// Every text from memory is put in the page as text (textContent), never as markup.
"use strict";

const state = {
  token: null, schema: null, agents: [], agent: null, status: null, onStatus: null, turn: 0,
  rates: new Map(), samples: new Map(),  // per agent: chunks embedded per second, and the counts it is taken from
};

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

class ApiError extends Error {
  constructor(code, message) { super(message); this.code = code; }
}

function post(route, params, signal) {
  // every call: POST, a JSON body, the token as a header, no cookies, nothing cached
  return fetch(route, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Authorization": `Bearer ${state.token}` },
    body: JSON.stringify(params || {}),
    credentials: "omit",
    cache: "no-store",
    signal,
  });
}

async function api(method, params) {
  const response = await post(`/api/${method}`, params);
  let body;
  try { body = await response.json(); } catch { throw new ApiError("http", `HTTP ${response.status}`); }
  if (body.error) throw new ApiError(body.error.code, body.error.message);
  return body.result;
}

function agentParams(extra) {
  const out = { ...(extra || {}) };
  if (state.agent) out.agent = state.agent;
  return out;
}

function when(seconds) {
  if (seconds === null || seconds === undefined) return "–";
  return new Date(seconds * 1000).toLocaleString();
}

function ago(seconds) {
  if (!seconds) return "never";
  const s = Math.max(0, Date.now() / 1000 - seconds);
  if (s < 90) return `${Math.round(s)} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 129600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

function localDay(date) {
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

function showError(where, error) {
  where.replaceChildren(el("p", { class: "error", text: `${error.code || "error"}: ${error.message}` }));
}

// routing -----------------------------------------------------------------------------------------------------------
function route() {
  const hash = location.hash.replace(/^#/, "") || "/search";
  const [path, query] = hash.split("?");
  return { page: path.replace(/^\//, "") || "search", params: new URLSearchParams(query || "") };
}

function go(page, params) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params || {})) {
    for (const one of [].concat(value)) query.append(key, String(one));
  }
  location.hash = `#/${page}${query.toString() ? `?${query}` : ""}`;
}

function notice(text, bad) {
  const box = document.getElementById("notice");
  box.textContent = text;
  box.className = bad ? "notice bad" : "notice";
  box.hidden = !text;
}

const pages = {};

async function render() {
  const { page, params } = route();
  for (const link of document.querySelectorAll("header nav a")) {
    link.classList.toggle("active", link.dataset.page === page || (page === "note" && link.dataset.page === "notes"));
  }
  const main = document.getElementById("main");
  state.onStatus = null;
  const draw = pages[page] || pages.search;
  const turn = (state.turn = (state.turn || 0) + 1);
  document.body.dataset.ready = "";
  const stale = () => turn !== state.turn;  // the user has moved on: a late answer draws nothing
  try {
    await draw(main, params, stale);
  } catch (error) {
    if (!stale()) showError(main, error);
  }
  if (!stale()) {  // drawn, for a test or `bench ui`: which page, and when since the page was opened
    document.body.dataset.msSinceOpen = String(Math.round(performance.now()));
    document.body.dataset.ready = page;
  }
}

// lines of a note, with its chunks and a cited range marked ----------------------------------------------------------
function noteLines(text, first, chunks, cited) {
  const lines = text.split("\n");
  if (lines.length && lines[lines.length - 1] === "") lines.pop();
  const pre = el("pre", { class: "lines" });
  lines.forEach((line, index) => {
    const number = first + index;
    const classes = ["ln"];
    const chunkIndex = (chunks || []).findIndex((c) => c.start_line <= number && number <= c.end_line);
    if (chunkIndex >= 0) {
      classes.push(chunkIndex % 2 ? "chunk-b" : "chunk-a");
      if (chunks[chunkIndex].start_line === number) classes.push("chunk-start");
    }
    if (cited && cited[0] <= number && number <= cited[1]) classes.push("cited");
    pre.append(el("div", { class: classes.join(" "), id: `L${number}`, "data-line": number },
      el("span", { class: "no", text: number }), el("span", { class: "tx", text: line })));
  });
  return pre;
}

function citationLink(citation, agent) {
  const match = /^(.*)#L(\d+)-L(\d+)$/.exec(citation || "");
  const params = match ? { path: match[1], from: match[2], to: match[3] } : { path: citation };
  if (agent) params.agent = agent;
  return el("a", { class: "cite", href: `#/note?${new URLSearchParams(params)}`, text: citation });
}

// search ------------------------------------------------------------------------------------------------------------
function searchField(spec, values) {
  const name = spec.name;
  const value = values.get(name);
  const help = spec.help;
  if (spec.type === "bool" && spec.optional) {  // on, off, or the agent's own setting
    return el("label", { title: help }, name, el("select", { name },
      el("option", { value: "", text: "(the agent's)" }),
      el("option", { value: "true", text: "on", selected: value === "true" }),
      el("option", { value: "false", text: "off", selected: value === "false" })));
  }
  if (spec.type === "bool") {
    const on = value === null ? name === "explain" : value === "true";  // the breakdown shows unless unticked
    const box = el("input", { type: "checkbox", name, checked: on });
    return el("label", { class: "check", title: help }, box, name);
  }
  if (spec.choices && spec.many) {
    const chosen = new Set(values.getAll(name));
    return el("label", { title: help }, name,
      el("span", {}, ...spec.choices.map((choice) => el("label", { class: "check" },
        el("input", { type: "checkbox", name, value: choice, checked: chosen.has(choice) }), choice))));
  }
  if (spec.choices) {
    const select = el("select", { name },
      el("option", { value: "", text: spec.default === null ? "(default)" : `(default: ${spec.default})` }),
      ...spec.choices.map((c) => el("option", { value: c, text: c, selected: value === c })));
    return el("label", { title: help }, name, select);
  }
  const numeric = spec.type === "int" || spec.type === "float";
  const input = el("input", {
    name, value: spec.many ? values.getAll(name).join(",") : (value || ""), type: numeric ? "number" : "text",
    step: spec.type === "float" ? "any" : null, min: spec.ge, max: spec.le,
    placeholder: spec.many ? "comma-separated" : (spec.default !== null && spec.default !== undefined ? String(spec.default) : ""),
  });
  return el("label", { title: help }, name, input);
}

function formParams(form, specs) {
  const data = new FormData(form);
  const out = {};
  for (const spec of specs) {
    if (spec.type === "bool" && spec.optional) {
      const chosen = data.get(spec.name);
      if (chosen === "true" || chosen === "false") out[spec.name] = chosen === "true";
      continue;
    }
    if (spec.type === "bool") {
      if (data.get(spec.name) !== null) out[spec.name] = true;
      continue;
    }
    const values = data.getAll(spec.name).map(String).filter((v) => v !== "");
    if (!values.length) continue;
    if (spec.many) {
      out[spec.name] = values.flatMap((v) => v.split(",")).map((v) => v.trim()).filter(Boolean);
    } else if (spec.type === "int") {
      out[spec.name] = parseInt(values[0], 10);
    } else if (spec.type === "float" && !/[^0-9.eE+-]/.test(values[0])) {
      out[spec.name] = parseFloat(values[0]);
    } else {
      out[spec.name] = values[0];
    }
  }
  return out;
}

function termsOf(query) {
  const words = query.toLowerCase().split(/[\s\p{P}\p{S}]+/u).filter((w) => w.length > 1 || /[^\x00-\x7f]/.test(w));
  const out = new Set();
  for (const word of words) {
    if (/[\p{Script=Han}\p{Script=Thai}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(word) && word.length > 2) {
      for (let i = 0; i + 2 <= word.length; i++) out.add(word.slice(i, i + 2));  // unspaced scripts: bigrams
    } else {
      out.add(word);
    }
  }
  return [...out].sort((a, b) => b.length - a.length);
}

function highlighted(text, terms) {
  const span = el("span");
  if (!terms.length) { span.textContent = text; return span; }
  const unspaced = /[\p{Script=Han}\p{Script=Thai}\p{Script=Hiragana}\p{Script=Katakana}]/u;
  const escaped = terms.map((t) => {
    const plain = t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    // a word is marked from its start ("cache" in "caches", not in "Memcached"); unspaced scripts anywhere
    return unspaced.test(t) ? plain : `(?<![\\p{L}\\p{N}])${plain}`;
  });
  const pattern = new RegExp(`(${escaped.join("|")})`, "giu");
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    span.append(text.slice(last, match.index), el("mark", { text: match[0] }));
    last = match.index + match[0].length;
  }
  span.append(text.slice(last));
  return span;
}

function explainChart(explain) {
  const rows = [
    ["keyword", explain.text_score], ["vector", explain.vector_score], ["fusion", explain.fused],
    ["decay", explain.decay], ["importance", explain.importance], ["access", explain.access_factor],
    ["final", explain.final],
  ];
  const chart = el("div", { class: "chart" });
  for (const [label, value] of rows) {
    const bar = el("span");
    bar.style.width = `${Math.max(0, Math.min(1, value || 0)) * 100}%`;
    chart.append(el("span", { text: label }), el("div", { class: "bar" }, bar),
      el("span", { text: value === null || value === undefined ? "–" : Number(value).toFixed(3) }));
  }
  const notes = explain.notes ? el("div", { class: "muted", text: [].concat(explain.notes).join("; ") }) : null;
  return el("div", { class: "explain" }, chart, notes);
}

async function showContext(button, hit) {
  const holder = button.closest("li").querySelector(".context");
  if (holder.childElementCount) { holder.replaceChildren(); return; }
  const from = Math.max(1, hit.start_line - 3);
  const got = await api("get", { path: hit.path, from, lines: hit.end_line - from + 4, agent: hit.agent || state.agent || undefined });
  holder.replaceChildren(noteLines(got.text, got.from, null, [hit.start_line, hit.end_line]));
}

pages.search = async (main, params, stale) => {
  const specs = state.schema.search.params.filter((p) => p.name !== "agent");
  const form = el("form", { class: "search", id: "search-form" });
  const query = specs.find((p) => p.name === "query");
  form.append(el("div", { class: "query" },
    el("input", { name: "query", type: "search", value: params.get("query") || "", placeholder: query.help, autofocus: true }),
    el("button", { type: "submit", text: "Search" })));
  for (const spec of specs) if (spec.name !== "query") form.append(searchField(spec, params));
  const out = el("div", { id: "search-results" });
  main.replaceChildren(form, out);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const values = formParams(form, specs);
    if (!values.explain) values.explain = false;
    go("search", values);
  });
  if (!params.get("query")) return;
  const request = agentParams(formParams(form, specs));
  out.replaceChildren(el("p", { class: "muted", text: "Searching…" }));
  try {
    const answer = await api("search", request);
    if (!stale()) drawHits(out, answer, params.get("query"));
  } catch (error) {
    if (!stale()) showError(out, error);
  }
};

function drawHits(out, answer, query) {
  const terms = termsOf(answer.restored_query ? `${query} ${answer.restored_query}` : query);
  const summary = [`${answer.results.length} results`, `mode ${answer.mode}`, `${answer.took_ms} ms`];
  if (answer.model) summary.push(`model ${answer.model}`);
  if (answer.degraded) summary.push(`degraded: ${answer.degraded}`);
  if (answer.restored_query) summary.push(`searched as "${answer.restored_query}"`);
  if (answer.partial) summary.push("partial: some agents did not answer");
  for (const skipped of answer.skipped || []) summary.push(`agent ${skipped.agent} skipped: ${skipped.message}`);
  const list = el("ol", { class: "hits" });
  answer.results.forEach((hit, index) => {
    const button = el("button", { type: "button", text: "context", onclick: (e) => showContext(e.target, hit).catch((err) => notice(err.message, true)) });
    list.append(el("li", { class: "hit", "data-citation": hit.citation },
      el("div", { class: "hit-head" },
        el("span", { class: "rank", text: `${index + 1}.` }), citationLink(hit.citation, hit.agent),
        el("span", { class: "score", text: `score ${hit.score.toFixed(3)}` }),
        hit.date ? el("span", { class: "muted", text: hit.date.slice(0, 10) }) : null,
        hit.agent ? el("span", { class: "muted", text: `agent ${hit.agent}` }) : null,
        hit.superseded ? el("span", { class: "superseded", text: `superseded ${hit.superseded}` }) : null,
        button),
      el("div", { class: "snippet" }, highlighted(hit.snippet, terms)),
      hit.explain ? explainChart(hit.explain) : null,
      el("div", { class: "context" })));
  });
  out.replaceChildren(el("p", { class: "summary", text: summary.join(" · ") }), list);
}

// one note ----------------------------------------------------------------------------------------------------------
pages.note = async (main, params, stale) => {
  const path = params.get("path");
  const agent = params.get("agent") || state.agent || undefined;
  const from = parseInt(params.get("from") || "0", 10);
  const to = parseInt(params.get("to") || String(from), 10);
  const [listing, got] = await Promise.all([
    api("notes", { path, agent }).catch((error) => ({ error, chunks: null, notes: [] })),
    api("get", { path, agent }),
  ]);
  if (stale()) return;
  const chunks = listing.chunks || [];
  const info = listing.notes && listing.notes[0];
  main.replaceChildren(
    el("h2", { class: "cite", text: path }),
    el("p", { class: "muted", text: `${got.total_lines} lines · ${chunks.length} chunks${info ? ` · ${info.date} · modified ${when(info.modified)}` : ""}${got.truncated ? " · truncated" : ""}` }),
    listing.error ? el("p", { class: "error", text: `its chunks are not shown: ${listing.error.message}` }) : null,
    noteLines(got.text, got.from, chunks, from ? [from, to] : null));
  if (from) document.getElementById(`L${from}`)?.scrollIntoView({ block: "center" });
};

// notes and timeline ------------------------------------------------------------------------------------------------
function folderLevel(listing, folder) {
  // one level of a folder: its subfolders (opened on demand, a call each) and its own files
  const prefix = folder ? `${folder}/` : "";
  const items = Object.entries(listing.folders || {}).map(([name, count]) => {
    const inner = el("div", { class: "inner" });
    const details = el("details", { "data-folder": `${prefix}${name}` }, el("summary", { text: `${name}/ (${count})` }), inner);
    details.addEventListener("toggle", async () => {
      if (!details.open || inner.childElementCount) return;
      try {
        inner.replaceChildren(folderLevel(await api("notes", agentParams({ path: `${prefix}${name}`, limit: TREE_FILES })), `${prefix}${name}`));
      } catch (error) { showError(inner, error); }
    });
    return details;
  });
  for (const file of listing.files || []) items.push(el("a", { href: noteHref(file.path), text: file.path.split("/").pop() }));
  const more = (listing.files_total || 0) - (listing.files || []).length;
  if (more > 0) items.push(el("div", { class: "muted", text: `… and ${more} more files here (memctl notes --path ${folder || "."} -n ${listing.files_total})` }));
  return el("div", { class: "tree" }, ...items);
}

function calendar(days, month, onPick) {
  const first = new Date(month.getFullYear(), month.getMonth(), 1);
  const grid = el("div", { class: "calendar", id: "calendar" });
  for (const name of ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]) grid.append(el("div", { class: "dow", text: name }));
  for (let i = 0; i < (first.getDay() + 6) % 7; i++) grid.append(el("div"));
  const today = localDay(new Date());
  for (let day = new Date(first); day.getMonth() === first.getMonth(); day.setDate(day.getDate() + 1)) {
    const key = localDay(day);
    const held = days[key] || 0;
    const classes = ["day", held ? "has" : "", key === today ? "today" : ""].filter(Boolean).join(" ");
    grid.append(el("button", { type: "button", class: classes, "data-day": key, onclick: () => onPick(key) },
      String(day.getDate()), held ? el("span", { class: "n", text: held }) : null));
  }
  return grid;
}

const TREE_FILES = 500;  // files listed at one level of the tree
const DAY_FILES = 200;  // and of one day (the newest)

function noteHref(path) {
  return `#/note?${new URLSearchParams({ path, ...(state.agent ? { agent: state.agent } : {}) })}`;
}

pages.notes = async (main, params, stale) => {
  const folder = params.get("path") || undefined;
  const shownDay = params.get("day") || localDay(new Date());
  const listing = await api("notes", agentParams({ day: shownDay, limit: DAY_FILES, path: folder }));
  if (stale()) return;
  const month = new Date(`${(params.get("month") || shownDay.slice(0, 7))}-01T12:00:00`);
  const dayList = el("div", { class: "daylist", id: "daylist" },
    el("h3", { text: `${shownDay}: ${listing.total} written` }),
    ...listing.notes.map((n) => el("a", { href: noteHref(n.path), text: n.path })),
    listing.total > listing.notes.length
      ? el("div", { class: "muted", text: `… the newest ${listing.notes.length} shown (memctl notes --day ${shownDay} -n ${listing.total})` })
      : null);
  const pick = (day) => go("notes", { ...(folder ? { path: folder } : {}), month: day.slice(0, 7), day });
  const shift = (by) => {
    const next = new Date(month.getFullYear(), month.getMonth() + by, 1);
    go("notes", { ...(folder ? { path: folder } : {}), month: localDay(next).slice(0, 7), day: shownDay });
  };
  const monthName = month.toLocaleDateString(undefined, { year: "numeric", month: "long" });
  const files = Object.values(listing.days).reduce((a, b) => a + b, 0);
  main.replaceChildren(
    el("p", { class: "muted", text: `${files} files in ${folder ? `${folder}/` : "memory"}` }),
    el("div", { class: "columns" },
      el("section", {}, el("h3", { text: "By folder" }), folderLevel(listing, folder)),
      el("section", {}, el("h3", { text: "By date" }),
        el("div", { class: "month" }, el("button", { type: "button", text: "‹", onclick: () => shift(-1) }),
          el("strong", { text: monthName }), el("button", { type: "button", text: "›", onclick: () => shift(1) })),
        calendar(listing.days, month, pick), dayList)));
  let seen = null;
  state.onStatus = (status) => {  // redrawn when the chosen agent's files change, not at every sync
    const mine = chosenAgent(status);
    const stamp = mine ? `${mine.files}/${mine.chunks}` : "";
    if (seen !== null && stamp !== seen) render();
    seen = stamp;
  };
};

// recall log --------------------------------------------------------------------------------------------------------
function dialog(title, body, actions) {
  const box = document.getElementById("dialog");
  const close = () => { box.hidden = true; box.replaceChildren(); };
  box.replaceChildren(el("div", {}, el("h3", { text: title }), body,
    el("div", { class: "actions" }, ...actions(close), el("button", { type: "button", text: "Cancel", onclick: close }))));
  box.hidden = false;
}

function linesOf(citation) {
  const match = /^(.*)#L(\d+)-L(\d+)$/.exec(citation || "");
  return match ? { path: match[1], from: parseInt(match[2], 10), lines: match[3] - match[2] + 1 } : null;
}

async function showMemory(button, citation, agent) {
  // the cited lines as the note holds them now (what the agent was shown, unless it changed since)
  const row = button.closest("tr");
  const next = row.nextElementSibling;
  if (next && next.classList.contains("shown-text")) { next.remove(); return; }
  const where = linesOf(citation);
  const got = where ? await api("get", { ...where, agent }) : null;
  row.after(el("tr", { class: "shown-text" }, el("td", { colspan: 4 }, el("pre", { class: "snippet", text: got ? got.text : citation }))));
}

async function forgetMemory(citation, agent) {
  const where = linesOf(citation);
  let got = where ? await api("get", { ...where, agent }) : null;
  const preview = el("pre", { class: "snippet", text: got ? got.text : citation });
  const said = el("p", { class: "error", id: "dialog-said" });
  dialog(`Forget ${citation}?`, el("div", {}, preview, said), (close) => [
    el("button", { type: "button", id: "confirm-forget", text: "Forget", onclick: async () => {
      try {
        const done = await api("forget", { citation, expect: got ? got.hash : undefined, agent });
        if (done.conflict) {  // the lines changed since they were shown: show what they say now, forget nothing
          got = done.current;
          preview.textContent = done.current.text;
          said.textContent = "These lines changed since you opened this; they now read as above. Forget them?";
          return;
        }
        close();
        notice(`Forgotten: ${done.forgotten}. memctl undo puts it back.`);
        render();
      } catch (error) { said.textContent = `${error.code}: ${error.message}`; }
    } }),
  ]);
}

async function editMemory(citation, agent) {
  const where = linesOf(citation);
  if (!where) return;
  let got = await api("get", { ...where, agent });
  const area = el("textarea", { id: "edit-text" });
  area.value = got.text.replace(/\n$/, "");
  const said = el("p", { class: "error", id: "dialog-said" });
  dialog(`Edit ${citation}`, el("div", {}, area, said), (close) => [
    el("button", { type: "button", id: "confirm-edit", text: "Save", onclick: async () => {
      try {
        const done = await api("update", { citation, text: area.value, expect: got.hash, agent });
        if (done.conflict) {  // nothing written: the note changed since; keep the user's text, show the note's
          said.textContent = `The note changed since you opened this; nothing was saved. It now reads: ${done.current.text}`;
          got = done.current;
          return;
        }
        close();
        notice(`Saved: ${done.citation}. memctl undo puts back what was there.`);
        render();
      } catch (error) { said.textContent = `${error.code}: ${error.message}`; }
    } }),
  ]);
}

const RECALLS_SHOWN = 200;  // prompts drawn at first; "show older" draws four times as many, up to the log's 1000

pages.recall = async (main, params, stale) => {
  const shown = Math.min(parseInt(params.get("limit") || "", 10) || RECALLS_SHOWN, 1000);
  const request = { skipped: true, limit: shown };
  if (state.agent) request.agent = state.agent;
  if (params.get("session")) request.session = params.get("session");
  const log = await api("recall_log", request);
  if (stale()) return;
  const sessions = new Map();
  for (const entry of log.entries) {
    const key = `${entry.agent} · ${entry.session || "(no session)"}`;
    sessions.set(key, [...(sessions.get(key) || []), entry]);
  }
  const blocks = [...sessions.entries()].reverse().map(([key, entries]) => el("section", { class: "session" },
    el("h3", { text: key }),
    ...entries.slice().reverse().map((entry) => el("div", { class: "entry" },
      el("div", { class: "muted", text: `${when(entry.time)} · ${entry.client || "client ?"} · ${entry.tokens || 0} tokens` }),
      el("div", { class: "prompt", text: entry.prompt }),
      entry.memories && entry.memories.length
        ? el("table", {}, el("tr", {}, el("th", { text: "memory" }), el("th", { text: "score" }), el("th", { text: "date" }), el("th")),
          ...entry.memories.map((m) => el("tr", {},
            el("td", {}, citationLink(m.citation, entry.agent)),
            el("td", { text: m.score === null || m.score === undefined ? "–" : Number(m.score).toFixed(3) }),
            el("td", { text: m.date ? String(m.date).slice(0, 10) : "–" }),
            el("td", {},
              el("button", { type: "button", class: "shown", text: "text", onclick: (e) => showMemory(e.target, m.citation, entry.agent).catch((err) => notice(err.message, true)) }),
              el("button", { type: "button", class: "forget", text: "forget", onclick: () => forgetMemory(m.citation, entry.agent).catch((e) => notice(e.message, true)) }),
              el("button", { type: "button", class: "edit", text: "edit", onclick: () => editMemory(m.citation, entry.agent).catch((e) => notice(e.message, true)) })))))
        : el("div", { class: "muted", text: `nothing put before it: ${entry.skipped || "no memory bore on it"}` })))));
  main.replaceChildren(
    el("p", { class: "muted" }, `the latest ${log.entries.length} prompts `,
      log.entries.length >= shown && shown < 1000
        ? el("button", { type: "button", id: "older", text: "show older", onclick: () => go("recall", { ...Object.fromEntries(params), limit: shown * 4 }) })
        : null),
    ...(blocks.length ? blocks : [el("p", { class: "muted", text: "No recall yet: the agent hooks write here." })]));
  let seen = null;
  state.onStatus = (status) => {  // redrawn when the chosen agent was given memories again
    const mine = chosenAgent(status);
    const stamp = JSON.stringify(mine ? mine.recall_log : null);
    if (seen !== null && stamp !== seen) render();
    seen = stamp;
  };
};

// status ------------------------------------------------------------------------------------------------------------
function kv(pairs) {
  const list = el("dl");
  for (const [key, value] of pairs) {
    if (value === undefined) continue;
    list.append(el("dt", { text: key }), el("dd", {}, value instanceof Node ? value : (value === null ? "–" : String(value))));
  }
  return list;
}

function progressBar(done, total, id) {
  const bar = el("span");
  bar.style.width = `${total ? Math.min(100, (100 * done) / total) : 100}%`;
  return el("div", { class: "progress", id, role: "progressbar", "aria-valuenow": done, "aria-valuemax": total }, bar);
}

function healthText(health) {
  if (!health || typeof health !== "object") return String(health);
  const since = health.since ? ` since ${when(health.since)}` : "";
  return health.ok === false ? `failing${since}: ${health.error || "unknown error"}` : `ok${since}`;
}

function replicaText(url, replica) {
  if (!replica) return url;
  const since = replica.since ? ` since ${when(replica.since)}` : "";
  return `${url}: ${replica.state}${since}, searches read the ${replica.reads_from}${replica.error ? ` (${replica.error})` : ""}`;
}

function lagText(lag) {
  if (!lag) return "–";
  return `${lag.seconds} s (${lag.bytes} bytes of WAL to replay)`;
}

function writerText(writer) {
  if (!writer) return "nobody: no daemon writes this namespace now";
  const who = [`pid ${writer.pid}`, writer.role, writer.application, writer.address].filter(Boolean).join(", ");
  return `${writer.this_daemon ? "this daemon" : "another daemon"} (${who})${writer.since ? ` since ${when(writer.since)}` : ""}`;
}

function agentCard(agent) {
  const chunks = agent.chunks || 0;
  const embedded = agent.embedded_chunks || 0;
  const rate = state.rates.get(agent.agent);
  const sync = (agent.reindex && agent.reindex.state === "running") ? agent.reindex : agent.sync_progress;
  const waiting = (agent.embedding && agent.embedding.waiting) || 0;
  const health = agent.index_error || agent.sync_error || (agent.embedding && agent.embedding.error);
  const languages = Object.entries(agent.languages || {}).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(", ");
  return el("div", { class: "card", id: `agent-${agent.agent}` },
    el("h3", { text: `agent ${agent.agent}` }),
    sync && sync.state === "running" ? el("div", {},
      el("div", { class: "muted", text: `${sync.kind || "sync"}: ${sync.done ?? 0} / ${sync.total ?? "?"} files${sync.eta_s ? ` · about ${Math.round(sync.eta_s)} s left` : ""}` }),
      progressBar(sync.done || 0, sync.total || 0, `sync-${agent.agent}`)) : null,
    el("div", { class: "muted", text: `vectors ${embedded} / ${chunks}${waiting ? `, ${waiting} waiting` : ""}${rate === 0 ? " · stalled" : rate ? ` · ${rate.toFixed(1)} chunks/s` : ""}` }),
    progressBar(embedded, chunks, `embed-${agent.agent}`),
    kv([
      ["health", el("span", { class: health ? "bad" : "ok", text: health || "ok" })],
      ["files", agent.files], ["chunks", chunks], ["workspace", agent.workspace],
      ["store", `${agent.store_kind || ""} ${agent.role ? `(${agent.role})` : ""}`],
      ["model", agent.model ? `${agent.provider} · ${agent.model}` : "none (keyword only)"],
      ["licence", agent.licence],
      ["languages", languages || "–"],
      ["watcher", agent.watcher === undefined ? undefined : (typeof agent.watcher === "string" ? agent.watcher : JSON.stringify(agent.watcher))],
      ["last sync", agent.last_sync ? ago(agent.last_sync) : "never"],
      ["recalls", agent.recall_log ? `${agent.recall_log.recalls} shown, ${agent.recall_log.skipped} with nothing to show, last ${ago(agent.recall_log.last)}` : undefined],
      ["namespace", agent.namespace],
      ["store health", agent.store_health === undefined ? undefined : healthText(agent.store_health)],
      ["replica", agent.read_from === undefined || agent.read_from === "primary" ? undefined : replicaText(agent.read_from, agent.replica)],
      ["replica lag", agent.replica_lag_s === undefined ? undefined : lagText(agent.replica_lag_s)],
      ["writer lock", agent.writer === undefined ? undefined : writerText(agent.writer)],
      ["readers granted", agent.readers_granted === undefined ? undefined : (agent.readers_granted.join(", ") || "none")],
    ]));
}

function drawStatus(holder, status) {
  const daemon = status.daemon;
  const integrations = Object.entries(daemon.integrations || {});
  holder.replaceChildren(
    el("div", { class: "cards" },
      el("div", { class: "card", id: "daemon" }, el("h3", { text: "daemon" }), kv([
        ["version", daemon.version], ["pid", daemon.pid], ["up", `${Math.round(daemon.uptime_s)} s`],
        ["memory", daemon.rss_mb ? `${daemon.rss_mb} MB` : null], ["socket", daemon.socket],
        ["reload error", daemon.reload_error || undefined],
        ["integrations", integrations.length
          ? integrations.map(([name, seen]) => `${name}: ${seen.calls} calls, last ${ago(seen.last_seen)}`).join("; ")
          : "no hook has reached the daemon since it started"],
      ])),
      ...status.agents.map(agentCard)));
}

pages.status = async (main, params, stale) => {
  const holder = el("div", { id: "status" });
  const status = state.status || await api("status", {});
  if (stale()) return;
  main.replaceChildren(holder);
  drawStatus(holder, status);
  state.onStatus = (latest) => drawStatus(holder, latest);
};

function chosenAgent(status) {
  return status.agents.find((a) => a.agent === state.agent) || status.agents[0];
}

// the live stream ---------------------------------------------------------------------------------------------------
const RATE_SECONDS = 10;  // the embedding rate is taken over this window; no progress in it while work waits: stalled

function trackRates(status) {
  const now = Date.now() / 1000;
  for (const agent of status.agents) {
    const seen = (state.samples.get(agent.agent) || []).filter((s) => now - s.t <= RATE_SECONDS);
    seen.push({ t: now, n: agent.embedded_chunks || 0 });
    state.samples.set(agent.agent, seen);
    const waiting = (agent.embedding && agent.embedding.waiting) || 0;
    const first = seen[0];
    if (!waiting) state.rates.delete(agent.agent);
    else if (now - first.t >= 2) state.rates.set(agent.agent, Math.max(0, (seen[seen.length - 1].n - first.n) / (now - first.t)));
  }
}

async function live() {
  // one stream while the tab is visible: a browser keeps six connections to a host, and hidden tabs that each held
  // one would leave the visible one none
  const dot = document.getElementById("live");
  let stopper = null;
  document.addEventListener("visibilitychange", () => {
    if (document.hidden && stopper) stopper.abort();
  });
  for (;;) {
    while (document.hidden) await new Promise((resolve) => setTimeout(resolve, 500));
    stopper = new AbortController();
    try {
      const response = await post("/api/events", {}, stopper.signal);
      if (response.status === 401) {  // the daemon restarted: its token is new
        notice("The daemon restarted: run memctl ui again to open the page with its new token.", true);
        dot.textContent = "○";
        return;
      }
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      dot.classList.add("on");
      dot.textContent = "●";
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event = /^event: (.*)$/m.exec(block);
          const data = /^data: (.*)$/m.exec(block);
          if (event && event[1] === "status" && data) {
            state.status = JSON.parse(data[1]);
            trackRates(state.status);
            if (state.onStatus) state.onStatus(state.status);
          }
        }
      }
    } catch (error) {
      // hidden, or the daemon restarted or went away: try again shortly
    }
    dot.classList.remove("on");
    dot.textContent = "○";
    if (!document.hidden) await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

// start -------------------------------------------------------------------------------------------------------------
async function start() {
  const fragment = new URLSearchParams(location.hash.replace(/^#/, ""));
  if (fragment.get("token")) {
    sessionStorage.setItem("memoryd-token", fragment.get("token"));
    history.replaceState(null, "", `${location.pathname}#/search`);
  }
  state.token = sessionStorage.getItem("memoryd-token");
  const main = document.getElementById("main");
  if (!state.token) {
    main.replaceChildren(el("p", { class: "error", text: "This page needs its token: open it with `memctl ui`." }));
    return;
  }
  try {
    [state.schema, state.agents] = await Promise.all([api("schema", {}), api("agents", {})]);
  } catch (error) {
    showError(main, error);
    return;
  }
  const picker = document.getElementById("agent");
  for (const agent of state.agents) picker.append(el("option", { value: agent.id, text: agent.id, selected: agent.default }));
  state.agent = picker.value || null;
  picker.addEventListener("change", () => { state.agent = picker.value; render(); });
  window.addEventListener("hashchange", render);
  render();
  live();
}

start();
