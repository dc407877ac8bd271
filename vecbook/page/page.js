// VecBook's search page. Every piece of record text reaches the page as a text node
// (textContent / append of strings), never as markup: a record holding <script> shows it.
// The address carries the whole search (/?q=...&mode=...&sources=...), so a search can be
// bookmarked; /search.json takes the same parameters and answers the same hits as JSON.
"use strict";

const TOKEN_KEY = "vecbook-token";   // sessionStorage: asked once per browser session
const CONTEXT = 3;                   // records shown before and after an opened hit
const FIELDS = ["q", "mode", "since", "until"];
const LISTS = ["sources", "participants"];
const DATE_FIELDS = ["since", "until"];
// The page sets these itself (open: the hit shown over the page); any other parameter of the
// address the form has no field for (filters, max_results, min_score...) is kept as it came.
const PAGE_OWN = ["open", "marks", "max_chars"];
// What /search.json takes (the server's SEARCH_PARAMS): any other parameter of the address (a
// link's utm_source) is no setting of the search, and sent on it would be refused as unknown.
const SEARCH_TAKES = ["q", "max_results", "mode", "filters", "sources", "participants", "since", "until", "dedupe",
  "recency_half_life_days", "fusion", "keyword_weight", "min_score", "max_total_chars", "max_chars", "marks"];
const SOURCES_RETRY_MS = 2000;       // how soon the page asks again for sources not ready yet
let searchNumber = 0;                // a newer search makes an older one's answer moot
let openNumber = 0;                  // a hit opened later (or the dialog closed) makes an older record's answer moot
let knownPeople = new Set();        // the participants the sources list, as written
let retry = null;                    // what to do again once a token is given
let tokenKept = null;                // the token handed to the browser for tabs the page opens
let extraParams = [];                // the address's settings the form has no field for, [name, value]
let maxQueryChars = 10000;           // the server's own limit, from /-/server.json

const $ = (id) => document.getElementById(id);

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (name === "class") node.className = value;
    else node.setAttribute(name, value);
  }
  node.append(...children.filter((child) => child !== null && child !== undefined && child !== ""));
  return node;
}

class NeedsToken extends Error {}

async function getJSON(path, params, withHeaders = false) {
  // withHeaders: [body, headers], for the headers /search.json answers beside its hits
  const headers = { Accept: "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = "Bearer " + token;
  let response;
  try {
    response = await fetch(path + (params ? "?" + params : ""), { headers, cache: "no-store" });
  } catch {  // the browser's own "Failed to fetch": no answer at all
    throw new Error("the VecBook server does not answer: is `vecbook serve --http` still running?");
  }
  let body;
  try { body = await response.json(); } catch { body = { error: response.status + " " + response.statusText }; }
  if (response.status === 401) {
    if (token) sessionStorage.removeItem(TOKEN_KEY);
    showTokenForm(token ? "that token is not this server's" : "");
    throw new NeedsToken(body.error);
  }
  if (!response.ok) throw new Error(body.error || response.statusText);
  if (token && token !== tokenKept) keepToken(token);
  return withHeaders ? [body, response.headers] : body;
}

function keepToken(token) {
  // A "JSON" link opens a tab of its own, which sends none of the page's headers: hand the token
  // (one the server just took) to the browser as a login password, challenged at /auth. The
  // browser keeps it for this server's origin alone, out of reach of scripts, until it closes,
  // and sends it with every request here: a JSON tab, or this page in a new tab, whose session
  // storage starts empty, needs no second prompt. A cookie would not do: a
  // cookie of 127.0.0.1 goes to every port of it, another user's server on this machine too.
  tokenKept = token;
  const request = new XMLHttpRequest();
  request.open("GET", "/auth", true, "vecbook", token);
  request.send();
}

function showTokenForm(problem) {
  $("token-form").hidden = false;
  $("token-problem").textContent = problem;
  $("token").focus();
}

// -- the form and the address --

function paramsFromForm() {
  const params = new URLSearchParams();
  for (const name of FIELDS) {
    const value = $(name).value.trim();
    if (value) params.set(name, value);
  }
  for (const box of document.querySelectorAll("#sources input:checked")) params.append("sources", box.value);
  for (const name of splitNames($("participants").value)) params.append("participants", name);
  for (const [name, value] of extraParams) params.append(name, value);
  return params;
}

function splitNames(text) {
  // Names are separated by commas, but a name may hold one: mail gives "Doe, Jane". Pieces
  // that together make a name the sources list are kept as that one name (the longest first).
  const pieces = text.split(",").map((piece) => piece.trim());
  const names = [];
  for (let at = 0; at < pieces.length; at++) {
    let end = pieces.length;
    while (end > at + 1 && !knownPeople.has(pieces.slice(at, end).join(", "))) end--;
    const name = pieces.slice(at, end).join(", ");
    if (name) names.push(name);
    at = end - 1;
  }
  return names;
}

function formFromParams(params) {
  for (const name of FIELDS) {
    // mode in any case (mode=Keyword, typed by hand), as the server takes it: the menu's are lower-case
    const typed = params.get(name) || "";
    const value = name === "mode" ? typed.toLowerCase() : typed;
    // since/until also take a span back from now (30d) or a date-time, which a date field would
    // blank out, and the next search from the form would then drop the filter: show those as text.
    if (DATE_FIELDS.includes(name)) $(name).type = !value || /^\d{4}-\d{2}-\d{2}$/.test(value) ? "date" : "text";
    $(name).value = value;
    // A date field blanks a date that is none (2024-02-30): show it as text, beside its error.
    if ($(name).value !== value) { $(name).type = "text"; $(name).value = value; }
  }
  const chosen = new Set(params.getAll("sources"));
  for (const box of document.querySelectorAll("#sources input")) box.checked = chosen.has(box.value);
  $("participants").value = params.getAll("participants").join(", ");
  showExtra([...params].filter(([name]) => SEARCH_TAKES.includes(name) && !FIELDS.includes(name)
    && !LISTS.includes(name) && !PAGE_OWN.includes(name)));
}

function showExtra(extra) {
  // An address may carry what the command line takes and the form has no field for (a metadata
  // filter as --filter, max_results as -n): shown, so the hits' filter is no secret, and kept for
  // the next search from the form, which would otherwise drop it without a word.
  extraParams = extra;
  $("extra").hidden = !extra.length;
  $("extra-list").replaceChildren(...extra.flatMap(([name, value], at) =>
    [at ? " · " : "", `${name}: `, el("bdi", {}, value)]));
}

function searchParams(params) {
  // what the search takes of the address: not the hit it opens, nor a parameter of another's
  return new URLSearchParams([...params].filter(([name]) => SEARCH_TAKES.includes(name)));
}

// -- results --

function metadataEntry(metadata, names) {
  for (const [key, value] of Object.entries(metadata || {})) {
    if (names.includes(key.toLowerCase())) return value;
  }
  return null;
}

function metadataValue(metadata, names) {
  const value = metadataEntry(metadata, names);
  return value === null ? "" : Array.isArray(value) ? value.join(", ") : String(value);
}

function peopleNode(metadata) {
  // Each name isolated in a <bdi>: Arabic or Hebrew names joined by commas would otherwise make
  // one right-to-left run, shown with the names in reverse order and the commas between misplaced.
  const value = metadataEntry(metadata, ["participants", "author", "from"]);
  const names = value === null ? [] : Array.isArray(value) ? value : [value];
  const span = el("span", { class: "people" });
  names.forEach((name, at) => span.append(at ? ", " : "", el("bdi", {}, String(name))));
  return span;
}

function appendMarked(parent, text, marks) {
  // marks: [start, end) offsets in characters (code points), as the server counts them
  const chars = Array.from(text);
  let at = 0;
  for (const [start, end] of marks || []) {
    parent.append(chars.slice(at, start).join(""), el("mark", {}, chars.slice(start, end).join("")));
    at = end;
  }
  parent.append(chars.slice(at).join(""));
  return parent;
}

function hitItem(hit, params) {
  const link = new URLSearchParams(params);
  link.set("open", hit.id);
  const meta = el("div", { class: "meta" },
    el("span", { class: "score", title: "similarity score" }, hit.similarity_score),
    el("span", { class: "citation" }, hit.citation),
    el("span", { class: "date" }, metadataValue(hit.metadata, ["date"])),
    el("span", { class: "source" }, hit.source),
    peopleNode(hit.metadata));
  const snippet = appendMarked(el("p", { class: "snippet" }), hit.snippet || hit.text, hit.snippet_marks);
  const anchor = el("a", { class: "open", href: "/?" + link }, meta, snippet);
  anchor.addEventListener("click", (event) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;  // a new tab: let it
    event.preventDefault();
    history.replaceState(null, "", "/?" + link);
    openContext(hit);
  });
  return el("li", { class: "hit" }, anchor);
}

async function runSearch(params) {
  const number = ++searchNumber;
  const status = $("status");
  status.className = "";
  const query = params.get("q");
  if (!query) {
    $("hits").replaceChildren();
    status.replaceChildren();
    return;
  }
  // Counted as the server counts (characters, not the UTF-16 units a box's maxlength counts, which
  // cut an emoji query at half the limit) and refused in its words, before a pasted page of
  // hundreds of KB goes into an address the server would not read.
  const length = Array.from(query).length;
  if (length > maxQueryChars) {
    $("hits").replaceChildren();
    status.className = "problem";
    status.textContent = `query is ${length.toLocaleString("en-US")} characters long; `
      + `the limit is ${maxQueryChars.toLocaleString("en-US")}`;
    return;
  }
  status.textContent = "searching…";
  const asked = searchParams(params);
  const started = performance.now();
  try {
    const withMarks = new URLSearchParams(asked);
    withMarks.set("marks", "true");
    withMarks.set("max_chars", "600");
    const [hits, headers] = await getJSON("/search.json", withMarks, true);
    if (number !== searchNumber) return;
    const took = Math.round(performance.now() - started);
    $("hits").replaceChildren(...hits.map((hit) => hitItem(hit, asked)));
    // During a first index a semantic or hybrid search is answered by keywords: say so.
    const answeredAs = headers.get("VecBook-Answered-As");
    // No hits: what left none (a filter, and what the records hold), as the CLI and MCP say it.
    const whyEmpty = headers.get("VecBook-No-Results");
    const note = el("span", { id: "open-note" });
    status.replaceChildren(
      hits.length ? `${hits.length} hit${hits.length === 1 ? "" : "s"} (${took} ms)`
        : whyEmpty ? `no results: ${decodeURIComponent(whyEmpty)}` : "no results",
      answeredAs ? ` · answered by ${answeredAs}s: the first index is still computing vectors; search `
                   + "again in a minute for hits by meaning" : "",
      note, el("a", { href: "/search.json?" + asked }, "JSON"));
    const open = params.get("open");
    const hit = open && hits.find((h) => h.id === open);
    if (hit) openContext(hit);
    else if (open) openById(open, note, number);
  } catch (error) {
    if (number !== searchNumber) return;
    if (error instanceof NeedsToken) { retry = () => runSearch(params); status.textContent = ""; return; }
    if (!error.message.startsWith("the VecBook server does not answer")) $("hits").replaceChildren();
    status.className = "problem";
    status.textContent = error.message;
  }
}

// -- a hit in context --

async function openById(id, note, number) {
  // An address's opened hit may no longer be among its search's hits (the index changed since,
  // or its search ranks differently now): say so, and open that record by its id all the same.
  note.textContent = ` · the hit this address opens (${id}) is not among these hits`;
  try {
    const { record } = await getJSON("/get.json", new URLSearchParams({ ref: id }));
    if (number !== searchNumber) return;  // another search came meanwhile: open nothing over it
    note.append(": opened from the index by its id");
    openContext({ id: record.id, citation: record.citation, snippet: "" });
  } catch (error) {
    if (error instanceof NeedsToken) { retry = () => runSearch(new URLSearchParams(location.search)); return; }
    note.className = "problem";
    note.append(`, and the index no longer holds it (edited or removed since?): ${error.message}`);
  }
}

function entryBlock(entry, hit) {
  const isHit = entry.id === hit.id;
  const where = entry.line_number ? `lines ${entry.line_number}-${entry.end_line}` : "";
  const head = el("h3", {},
    isHit ? el("span", { class: "label" }, "this hit · ") : null,
    `${entry.citation}  ${metadataValue(entry.metadata, ["date"])}  ${where}`);
  const text = el("div", { class: "text" });
  const found = isHit ? snippetSpan(entry.text, hit.snippet) : null;
  if (found) {
    text.append(entry.text.slice(0, found[0]), el("mark", {}, entry.text.slice(found[0], found[1])),
                entry.text.slice(found[1]));
  } else {
    text.append(entry.text);
  }
  const block = el("article", { class: isHit ? "entry this-hit" : "entry" }, head, text);
  if (isHit) block.setAttribute("aria-current", "true");
  return block;
}

function snippetSpan(text, snippet) {
  // the snippet is a stretch of the record, with … where it was cut
  const core = (snippet || "").replace(/^…/, "").replace(/…$/, "").trim();
  const at = core ? text.indexOf(core) : -1;
  return at >= 0 ? [at, at + core.length] : null;
}

async function openContext(hit) {
  const number = ++openNumber;
  const dialog = $("context");
  $("context-title").textContent = hit.citation;
  const params = new URLSearchParams({ ref: hit.id, context: String(CONTEXT) });
  $("context-json").setAttribute("href", "/get.json?" + params);
  $("entries").replaceChildren(el("p", {}, "loading…"));
  if (!dialog.open) dialog.showModal();
  try {
    const context = await getJSON("/get.json", params);
    // A long record may come seconds later, after Escape and another hit opened: not over that one.
    if (number !== openNumber) return;
    const entries = [...context.before, context.record, ...context.after];
    $("entries").replaceChildren(...entries.map((entry) => entryBlock(entry, hit)));
    // The hit's marked snippet, not the whole record: a long record centred shows its middle,
    // hundreds of lines from the match.
    const mine = $("entries").querySelector(".this-hit mark") || $("entries").querySelector(".this-hit");
    if (mine) mine.scrollIntoView({ block: "center" });
  } catch (error) {
    if (number !== openNumber) return;
    if (error instanceof NeedsToken) { dialog.close(); retry = () => openContext(hit); return; }
    $("entries").replaceChildren(el("p", { class: "problem" }, error.message));
  }
}

function closeContext() {
  openNumber++;  // a record still on its way is no longer wanted
  const params = new URLSearchParams(location.search);
  if (params.has("open")) {
    params.delete("open");
    history.replaceState(null, "", "/?" + params);
  }
}

// -- what the server searches --

async function loadSources() {
  const [about, sources] = await Promise.all([getJSON("/-/server.json"), getJSON("/sources.json")]);
  $("default-mode").textContent = `default (${about.search_mode})`;
  if (about.max_query_chars) maxQueryChars = about.max_query_chars;
  const boxes = sources.map((source) => el("label", { title: source.description || source.path || "" },
    el("input", { type: "checkbox", value: source.name }), ` ${source.name} (${source.records})`));
  $("sources").append(...boxes);
  const people = new Set(sources.flatMap((source) => source.participants || []));
  knownPeople = people;
  $("people").replaceChildren(...[...people].slice(0, 1000).map((name) => el("option", { value: name })));
  const firsts = sources.map((s) => s.first_date).filter(Boolean).sort();
  const lasts = sources.map((s) => s.last_date).filter(Boolean).sort();
  for (const id of ["since", "until"]) {
    if (firsts.length) $(id).setAttribute("min", firsts[0].slice(0, 10));
    if (lasts.length) $(id).setAttribute("max", lasts[lasts.length - 1].slice(0, 10));
  }
}

async function start() {
  // The sources come once the server has read the index: a first start over many files answers
  // "still loading" for a while (and a server being restarted does not answer). Say so and ask
  // again, rather than leave the page without its filters and the address's search until a reload.
  for (;;) {
    try {
      await loadSources();
      break;
    } catch (error) {
      if (error instanceof NeedsToken) { retry = start; return; }
      $("status").className = "problem";
      $("status").textContent = error.message;
      await new Promise((resolve) => setTimeout(resolve, SOURCES_RETRY_MS));
    }
  }
  // The address now, not at the first try: a search made meanwhile moved it.
  const params = new URLSearchParams(location.search);
  formFromParams(params);
  await runSearch(params);
  if (!params.get("q")) $("q").focus();
}

document.addEventListener("DOMContentLoaded", () => {
  // The form is novalidate: the date fields' min and max only offer the records' span in the
  // picker; a date beyond it (a bookmarked "since 2020", a note written after the page loaded) is
  // a search the server answers, which the browser's own check would refuse to send.
  $("search").addEventListener("submit", (event) => {
    event.preventDefault();
    if (!$("q").value.trim()) { $("q").focus(); return; }
    const params = paramsFromForm();
    history.pushState(null, "", "/?" + params);
    runSearch(params);
  });
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
    $("token").value = "";
    $("token-form").hidden = true;
    if (retry) { const again = retry; retry = null; again(); }
  });
  $("extra-clear").addEventListener("click", () => {
    showExtra([]);
    if ($("q").value.trim()) $("search").requestSubmit();
  });
  $("close").addEventListener("click", () => $("context").close());
  $("context").addEventListener("close", closeContext);
  window.addEventListener("popstate", () => {
    const params = new URLSearchParams(location.search);
    formFromParams(params);
    if ($("context").open) $("context").close();
    runSearch(params);
  });
  document.addEventListener("keydown", (event) => {
    // Only a field that takes text keeps the key: a checkbox or button (a source just ticked) does not.
    const target = event.target;
    const typing = (target.tagName === "INPUT" && !/^(checkbox|radio|button|submit|reset)$/.test(target.type))
      || /^(TEXTAREA|SELECT)$/.test(target.tagName) || target.isContentEditable;
    if (event.key === "/" && !typing && !$("context").open) {
      event.preventDefault();
      $("q").focus();
      $("q").select();
    }
  });
  start();
});
