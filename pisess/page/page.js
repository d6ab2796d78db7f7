/* pisess explorer page.  The data (pisess-data) says everything: this script looks facts up, replays
   each node's context change and draws.  Session text is only ever set as text (textContent,
   createTextNode) or handed to markdown-it with raw HTML off; nothing here decides pi's rules. */
(function () {
  "use strict";
  var dataEl = document.getElementById("pisess-data"), D = JSON.parse(dataEl.textContent);
  // the messages: one JSON document per line, in elements of about half a megabyte (data-chunks: the
  // first message of each).  Those of the leaf's context come before this script and the rest after
  // it, so the page is drawn while the browser still reads the bulk; a message is parsed when drawn.
  var CHUNK_START = (dataEl.getAttribute("data-chunks") || "").split(" ").filter(Boolean).map(Number);
  var chunkText = [], chunkLines = [], msgCache = new Map(), missing = new Set();
  var LOADING = Object.freeze({});  // a message whose element the browser has not read yet
  function chunkOf(k) { var lo = 0, hi = CHUNK_START.length - 1; while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (CHUNK_START[mid] <= k) lo = mid; else hi = mid - 1; } return lo; }
  function lineStarts(t) { var out = [0]; for (var nl = t.indexOf("\n"); nl >= 0; nl = t.indexOf("\n", nl + 1)) out.push(nl + 1); return out; }
  function chunkRead(c) {
    if (chunkText[c] !== undefined) return true;
    var e = document.getElementById("pisess-m" + c);  // (whole once something follows it, or the document is read)
    if (!e || (!e.nextSibling && document.readyState === "loading")) return false;
    chunkText[c] = e.textContent; chunkLines[c] = lineStarts(chunkText[c]);
    return true;
  }
  function msg(k) {
    var m = msgCache.get(k);
    if (m === undefined) {
      if (!(k >= 0 && k < D.msize.length) || !CHUNK_START.length) return null;
      var c = chunkOf(k);
      if (!chunkRead(c)) { missing.add(c); return LOADING; }
      var t = chunkText[c], starts = chunkLines[c], i = k - CHUNK_START[c];
      m = JSON.parse(t.slice(starts[i], i + 1 < starts.length ? starts[i + 1] - 1 : t.length));
      if (msgCache.size > 20000) msgCache.clear();
      msgCache.set(k, m);
    }
    return m;
  }
  function allRead() { for (var c = 0; c < CHUNK_START.length; c++) if (!chunkRead(c)) return false; return true; }
  function whenAllRead(fn) { if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fn); else fn(); }
  var M = D.meta, N = D.ids.length, ROWH = 20;
  // columns stored as codes, and each entry's tokens and dollars (what diff's side table sums of it)
  D.type = D.type.map(function (c) { return D.types[c]; });
  D.place = D.place.map(function (c) { return D.places[c]; });
  (function () { var at = -1; D.rows.pos = D.rows.posStep.map(function (d) { at += d; return at; }); })();
  D.parent = D.parentBack.map(function (b, p) { return b === null ? -1 : p - b; });  // (a parent written after its child: b < 0)
  D.same = D.sameBack.map(function (b, i) { return i - b; });
  D.shape = D.shapeBack.map(function (b, i) { return i - b; });
  D.time = D.time.map(function (t) { return t === null ? null : t + M.first; });
  D.usage = D.did.map(function (d) { return d && (d.t || d.$) ? [d.t ? d.t[0] + d.t[1] + d.t[2] + d.t[3] : 0, d.$ || 0] : 0; });
  var doc = document, root = doc.documentElement;
  root.classList.add("app");

  // --- helpers ----------------------------------------------------------------------------------
  function el(tag, attrs, kids) {
    var e = doc.createElement(tag);
    if (attrs) for (var k in attrs) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") e.className = v; else if (k === "text") e.textContent = v;
      else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), v); else e.setAttribute(k, v === true ? "" : String(v));
    }
    if (kids) for (var i = 0; i < kids.length; i++) if (kids[i] !== null && kids[i] !== undefined)
      e.appendChild(typeof kids[i] === "string" ? doc.createTextNode(kids[i]) : kids[i]);
    return e;
  }
  function idOf(p) { var v = D.ids[p]; return v === null || v === undefined ? "" : String(v); }
  function sid(p) { return idOf(p).slice(0, M.idWidth || 8); }
  var NUMBERS = new Intl.NumberFormat("en-US");  // (toLocaleString makes one per call: 0.3 ms each)
  function num(n) { return NUMBERS.format(n); }
  function count(n, one, many) { return num(n) + " " + (n === 1 ? one : many); }  // "1 branch point", "2 branch points"
  function money(c) { return "$" + (c || 0).toFixed(c >= 100 ? 0 : c >= 1 ? 2 : 4); }
  function kfmt(n) { return n >= 1e6 ? (n / 1e6).toFixed(1) + "M" : n >= 1e3 ? (n / 1e3).toFixed(1) + "k" : String(n); }
  function when(ms, withDate) {
    if (typeof ms !== "number") return "";
    var d = new Date(ms); if (isNaN(d)) return "";
    var iso = d.toISOString();
    return withDate ? iso.slice(0, 19).replace("T", " ") + " UTC" : iso.slice(11, 19);
  }
  function spansDays() { return M.first !== null && M.last !== null && when(M.first, true).slice(0, 10) !== when(M.last, true).slice(0, 10); }
  function dur(ms) {
    if (typeof ms !== "number") return "";
    if (ms < 1000) return Math.round(ms) + " ms";
    var s = ms / 1000; if (s < 60) return s.toFixed(1) + " s";
    var m = Math.floor(s / 60); if (m < 60) return m + " min " + Math.round(s % 60) + " s";
    return Math.floor(m / 60) + " h " + (m % 60) + " min";
  }
  function str(v) { return typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v, null, 2); }
  var sources = new WeakMap();
  function block(kind, node, source) { node.setAttribute("data-block", kind); sources.set(node, source); return node; }

  // --- the tree -----------------------------------------------------------------------------------
  var R = D.rows, rowOf = new Int32Array(N).fill(-1);
  for (var i = 0; i < R.pos.length; i++) if (R.pos[i] >= 0) rowOf[R.pos[i]] = i;
  var kids = new Array(N);
  for (var p = 0; p < N; p++) { var q = D.parent[p]; if (q >= 0 && q !== p) (kids[q] || (kids[q] = [])).push(p); }
  var findingsAt = {};
  D.findings.forEach(function (f, k) { if (f.entry !== null && f.entry !== undefined) (findingsAt[f.entry] || (findingsAt[f.entry] = [])).push(k); });
  var flagsOf = function (r) { return D.rows.flagSets[R.flags[r]]; };
  // pi 1.6.0's export page's filters (template.js, filterNodes): the leaf always shows; an assistant
  // message without text that neither failed nor was aborted never does (the core lists them: untexted)
  var untexted = new Uint8Array(N); D.untexted.forEach(function (p) { untexted[p] = 1; });
  var roleIs = function (p, word) { return D.type[p] === "message" && D.words[D.word[p]] === word; };
  var SETTINGS = { label: 1, custom: 1, context_edit: 1, model_change: 1, thinking_level_change: 1 };
  var FILTERS = {
    "default": function (p) { return !SETTINGS[D.type[p]]; },
    "no-tools": function (p) { return !SETTINGS[D.type[p]] && !roleIs(p, "tool"); },
    "user": function (p) { return roleIs(p, "user"); },
    "labeled": function (p) { return D.label[p] !== undefined; },
    "all": function () { return true; }
  };
  var state = { sel: M.leaf === null ? (R.pos.length ? R.pos[0] : -1) : M.leaf, tab: "entry", filter: "default",
    folded: {}, b: M.leaf, q: "", hits: [], hit: -1, original: false };
  var visible = [], visibleAt = new Map(), visibleKey = "";  // row indexes shown, and where each is among them
  function msgOfEntry(p) { var v = D.entry[p]; return typeof v === "number" ? msg(v) : null; }
  function rebuildVisible() {
    var key = state.filter + "|" + Object.keys(state.folded).filter(function (k) { return state.folded[k]; }).join(",");
    if (key === visibleKey) return;
    visibleKey = key;
    var keep = FILTERS[state.filter]; visible = []; visibleAt = new Map();
    var foldUntil = null;
    for (var r = 0; r < R.pos.length; r++) {
      var ind = D.rows.indents[R.indent[r]];
      if (foldUntil !== null) { if (ind.indexOf(foldUntil) === 0 && ind.length >= foldUntil.length) continue; foldUntil = null; }
      var p = R.pos[r];
      if (p === M.leaf || (!untexted[p] && keep(p))) { visibleAt.set(r, visible.length); visible.push(r); }
      if (state.folded[p]) foldUntil = sideGuide(ind);
    }
  }
  function sideGuide(ind) {  // the guides under which a side branch that starts with "├─" goes on
    return ind.slice(-2) === "\u251c\u2500" ? ind.slice(0, -2) + "\u2502 " : ind + "\u0000";
  }
  function foldable(p) { var r = rowOf[p]; return r >= 0 && D.rows.indents[R.indent[r]].slice(-2) === "\u251c\u2500" && kids[p]; }

  // --- the context at a node: replayed from the nearest start ----------------------------------
  function contextAt(pos) {
    var chain = [], p = pos;
    while (p >= 0) { chain.push(p); var c = D.ctx[p]; if (c && (c.r || c.e !== undefined)) break; p = D.parent[p]; if (p === chain[chain.length - 1]) break; }
    var segs = [];  // (this call's own array: changed in place, a replay of thousands of changes stays linear)
    for (var k = chain.length - 1; k >= 0; k--) {
      var ch = D.ctx[chain[k]];
      if (!ch) continue;
      if (Array.isArray(ch)) { segs.push([chain[k], ch]); continue; }  // its own entry appends these
      if (ch.e !== undefined) { if (k === 0) return { error: ch.e }; segs = []; continue; }
      if (ch.r) segs = [];
      else if (ch.p) ch.p.forEach(function (x) { segs[x[0]] = x[1]; });
      if (ch.a) for (var i = 0; i < ch.a.length; i++) segs.push(ch.a[i]);
    }
    return { segs: segs };
  }
  var spent = new Map();  // node -> [tokens, dollars] from the root to it
  function spentTo(pos) {
    var chain = [], p = pos;
    while (p >= 0 && !spent.has(p) && chain.length <= N) { chain.push(p); p = D.parent[p]; }
    var acc = p >= 0 && spent.has(p) ? spent.get(p) : [0, 0];
    for (var k = chain.length - 1; k >= 0; k--) { var u = D.usage[chain[k]]; acc = u ? [acc[0] + u[0], acc[1] + u[1]] : acc; spent.set(chain[k], acc); }
    return spent.get(pos) || [0, 0];
  }
  function cutPath(pos) {  // the path diff parts: the SDK reader's begins where its stop rule cut it (the core says where)
    var stop = D.cut ? D.cut[pos] : -1;
    if (stop < 0) return pathTo(pos);
    var out = [], p = pos, seen = {};
    while (p >= 0 && !seen[p]) { seen[p] = 1; out.push(p); if (p === stop) break; p = D.parent[p]; }
    return out.reverse();
  }
  function pathTo(pos) { var out = [], p = pos, seen = {}; while (p >= 0 && !seen[p]) { seen[p] = 1; out.push(p); p = D.parent[p]; } return out.reverse(); }

  // --- markdown (only what is drawn) ------------------------------------------------------------
  var md = null;
  if (typeof window.markdownit === "function") {
    md = window.markdownit({ html: false, linkify: false, typographer: false });
    md.disable(["image"]);
    md.validateLink = function (url) { return /^(https?:|mailto:)/i.test(String(url).trim()); };
    var dflt = md.renderer.rules.link_open || function (t, i, o, e, s) { return s.renderToken(t, i, o); };
    md.renderer.rules.link_open = function (tokens, idx, opts, env, self) {
      tokens[idx].attrSet("rel", "noopener noreferrer nofollow"); tokens[idx].attrSet("target", "_blank");
      return dflt(tokens, idx, opts, env, self);
    };
  }
  var MD_MAX = 200000, PRE_LINES = 60, folded = new WeakMap();  // a folded <pre> -> its whole text
  // a long block shows its first lines and a button for the rest (laying out thousands of lines on
  // every selection is what makes a page slow); its source stays the whole text
  function pre(text) {
    var node = el("pre"), lines = 0, at = -1;
    while (lines < PRE_LINES && (at = text.indexOf("\n", at + 1)) >= 0) lines++;
    if (lines < PRE_LINES || at < 0 || at >= text.length - 1) { node.textContent = text; return node; }
    node.textContent = text.slice(0, at + 1);
    var rest = text.length - at - 1, more = text.split("\n").length - PRE_LINES;
    var btn = el("button", { type: "button", class: "more", text: "\u2026 " + count(more, "more line", "more lines") + " (" + kfmt(rest) + " chars): show all" });
    btn.addEventListener("click", function () { node.textContent = text; });
    folded.set(node, text);
    node.appendChild(btn);
    return node;
  }
  function prose(kind, text, asMarkdown) {
    var node;
    if (md && asMarkdown && text.length <= MD_MAX) {
      node = el("div", { class: "md" });
      node.innerHTML = md.render(text);  // markdown-it escapes every character of the source (html: false)
    } else node = pre(text);
    return block(kind, node, text);
  }

  // --- drawing a message ----------------------------------------------------------------------------
  function imageNode(b) {
    var words = (b.mimeType || "image") + " \u00b7 " + kfmt(b.bytes || 0) + "B";
    if (typeof b.ref === "number" && D.images[b.ref] !== undefined) {
      var img = el("img", { class: "thumb", alt: words, src: "data:" + (/^image\/[a-z0-9.+-]+$/i.test(b.mimeType || "") ? b.mimeType : "image/png") + ";base64," + D.images[b.ref] });
      img.addEventListener("click", function () { img.className = img.className === "thumb" ? "full" : "thumb"; });
      return block("image", img, words);
    }
    return block("image", el("span", { class: "img", text: "[image omitted: " + words + "]" }), words);
  }
  function contentNodes(m, out, textKind, markdown) {
    var c = m.content;
    if (typeof c === "string") { if (c.trim()) out.push(prose(textKind, c, markdown)); return; }
    if (!Array.isArray(c)) { if (c !== undefined && c !== null) out.push(block(textKind, el("pre", { text: str(c) }), str(c))); return; }
    c.forEach(function (b) {
      if (!b || typeof b !== "object") { out.push(block(textKind, el("pre", { text: str(b) }), str(b))); return; }
      if (b.type === "text") { if (typeof b.text === "string") out.push(prose(textKind, b.text, markdown)); }
      else if (b.type === "thinking") {
        var t = typeof b.thinking === "string" ? b.thinking : "";
        var d = el("details", null, [el("summary", { text: b.redacted ? "Thinking (redacted by the provider)" : "Thinking (" + num(t.length) + " chars)" }), pre(t)]);
        out.push(block("thinking", d, t));
      } else if (b.type === "toolCall") {
        var args = str(b.arguments);
        out.push(block("toolCall", el("div", null, [el("strong", { text: "Tool call: " + str(b.name) }), pre(args)]), args));
      } else if (b.type === "image") out.push(imageNode(b));
      else out.push(block(textKind, el("pre", { text: str(b) }), str(b)));
    });
  }
  var TITLES = { user: "User", assistant: "Assistant", toolResult: "Tool result", bashExecution: "Bash", custom: "Extension message",
    compactionSummary: "Compaction summary", branchSummary: "Branch summary", system: "System" };
  function messageNode(m, entry, n, mark) {
    if (m === LOADING) return el("p", { class: "muted", "data-loading": true, text: "\u2026 (the page is still being read)" });
    m = m || {};
    var role = typeof m.role === "string" ? m.role : "?";
    var title = (n ? n + ". " : "") + (TITLES[role] || role) + (role === "toolResult" ? " \u00b7 " + str(m.toolName) : "");
    var meta = [sid(entry) + " " + (D.words[D.word[entry]] || "")];
    if (typeof m.timestamp === "number") meta.push(when(m.timestamp, true));
    if (role === "assistant") { if (m.model) meta.push(str(m.provider) + "/" + str(m.model)); if (m.stopReason && m.stopReason !== "stop" && m.stopReason !== "toolUse") meta.push("stop: " + str(m.stopReason)); }
    if (role === "toolResult" && m.isError === true) meta.push("error");
    var head = [el("h3", { text: title }), el("p", { class: "meta", text: meta.join(" \u00b7 ") })];
    if (mark) head.push(el("p", { class: "markw", text: mark === "hidden" ? "\u2205 hidden by a context edit (the model does not see it)" : "\u270e edited by a context edit: shown as the model sees it" }));
    var body = [];
    if (role === "compactionSummary" || role === "branchSummary") { if (typeof m.summary === "string") body.push(prose("summary", m.summary, true)); else body.push(block("summary", el("pre", { text: str(m.summary) }), str(m.summary))); }
    else if (role === "bashExecution") {
      var cmd = "$ " + str(m.command);
      body.push(block("toolCall", el("pre", { text: cmd }), str(m.command)));
      body.push(block("toolResult", pre(str(m.output)), str(m.output)));
      if (m.exitCode !== undefined && m.exitCode !== 0 && m.exitCode !== null) body.push(el("p", { class: "meta", text: "exit code " + str(m.exitCode) }));
    } else if (role === "toolResult") contentNodes(m, body, "toolResult", false);
    else if (role === "system") {  // a system message: its text, the sections it sets, the tools it adds and removes
      contentNodes(m, body, "text", false);
      if (m.sections && typeof m.sections === "object") Object.keys(m.sections).forEach(function (k) {
        var v = m.sections[k];
        body.push(el("div", { class: "meta", text: "section " + k + (v === null ? ": removed" : "") }));
        if (v !== null) body.push(block("text", pre(str(v)), str(v)));
      });
      [["toolsAdded", "+tools "], ["toolsRemoved", "-tools "]].forEach(function (x) {
        if (Array.isArray(m[x[0]]) && m[x[0]].length) body.push(el("p", { class: "meta", text: x[1] + m[x[0]].map(function (t) { return str(t && t.name); }).join(", ") }));
      });
    }
    else contentNodes(m, body, "text", role === "user" || role === "assistant" || role === "custom");
    var sec = el("section", { class: "msg " + role, "data-msg": true, "data-entry-id": idOf(entry), "data-role": role, "data-mark": mark || null }, head.concat(body));
    return sec;
  }

  // --- layout ----------------------------------------------------------------------------------------
  var app = doc.getElementById("app");
  var titleText = doc.title;
  var themeBtn = el("button", { type: "button", title: "light / dark", text: "\u25d0 theme", onclick: function () {
    var dark = root.getAttribute("data-theme") ? root.getAttribute("data-theme") === "dark" : matchMedia("(prefers-color-scheme: dark)").matches;
    root.setAttribute("data-theme", dark ? "light" : "dark");
  } });
  var drawerBtn = el("button", { type: "button", class: "drawer-btn", text: "\u2630 tree", "aria-label": "show the tree", "aria-controls": "pisess-tree",
    "aria-expanded": "false", onclick: function () { setDrawer(!app.classList.contains("drawer-open")); } });
  function setDrawer(open) { app.classList.toggle("drawer-open", open); drawerBtn.setAttribute("aria-expanded", open ? "true" : "false"); if (open) drawTree(); }
  var helpBtn = el("button", { type: "button", text: "? keys", onclick: function () { toggleHelp(); } });
  var facts = el("div", { class: "facts" });
  var top = el("header", { class: "top" }, [drawerBtn, el("h1", { text: titleText }), facts, el("div", { class: "tools" }, [helpBtn, themeBtn])]);
  var filterBar = el("div", { class: "filters", role: "toolbar", "aria-label": "filters" });
  ["default", "no-tools", "user", "labeled", "all"].forEach(function (f) {
    filterBar.appendChild(el("button", { type: "button", "data-filter": f, "aria-pressed": f === state.filter ? "true" : "false", text: f, onclick: function () { setFilter(f); } }));
  });
  var searchInput = el("input", { type: "search", "data-search-input": true, placeholder: "search every text  ( / )", "aria-label": "search" });
  var searchBar = el("div", { class: "searchbar" }, [searchInput]);
  var treeBox = el("div", { class: "tree", tabindex: "0", role: "tree", "aria-label": "entries" });
  var spacer = el("div", { class: "spacer" });
  treeBox.appendChild(spacer);
  var hitsBox = el("div", { class: "hits", "data-pane": "search", hidden: true });
  var branchList = el("details", { class: "branches" });
  var promptList = el("details", { class: "branches prompts" });
  var side = el("nav", { class: "side", id: "pisess-tree", "data-pane": "tree" }, [filterBar, searchBar, el("div", { class: "extras" }, [hitsBox, promptList, branchList]), treeBox]);
  var resizer = el("div", { class: "resizer", role: "separator", "aria-label": "resize the tree" });
  var TABS = ["entry", "path", "context", "trace", "compare"];
  var tabBar = el("div", { class: "tabs", role: "tablist" });
  var panes = {}, view = el("div", { class: "view" });
  TABS.forEach(function (t) {
    tabBar.appendChild(el("button", { type: "button", role: "tab", "data-tab": t, "aria-selected": "false", text: t[0].toUpperCase() + t.slice(1), onclick: function () { go({ tab: t }); } }));
    panes[t] = el("section", { "data-pane": t, hidden: true });
    view.appendChild(panes[t]);
  });
  var nodeId = el("span", { class: "nodeid" });
  var copyBtn = el("button", { type: "button", text: "copy link", title: "copy a link to this node and tab", onclick: function () { copyLink(); } });
  tabBar.appendChild(nodeId); tabBar.appendChild(copyBtn);
  var panel = el("main", { class: "panel" }, [tabBar, view]);
  var mainBox = el("div", { class: "main" }, [side, resizer, panel]);
  var help = el("div", { class: "help", hidden: true, role: "dialog", "aria-label": "keys" });
  app.appendChild(top); app.appendChild(mainBox); app.appendChild(help);
  app.hidden = false;

  // header facts
  (function () {
    var f = [];
    f.push("session " + str(M.sessionId));
    if (M.cwd) f.push(str(M.cwd));
    if (M.first !== null) f.push(when(M.first, true) + (M.last !== null ? " \u2192 " + (spansDays() ? when(M.last, true) : when(M.last, false)) : ""));
    f.push(count(M.entryCount, "entry", "entries") + " \u00b7 " + count(M.branchPoints, "branch point", "branch points") + (M.roots > 1 ? " \u00b7 " + M.roots + " roots" : ""));
    f.push(kfmt(M.tokens) + " tokens \u00b7 " + money(M.cost) + " all branches; " + kfmt(M.activeTokens) + " \u00b7 " + money(M.activeCost) + " active path");
    var models = Object.keys(M.models || {}); if (models.length) f.push(models.slice(0, 3).join(", ") + (models.length > 3 ? " +" + (models.length - 3) : ""));
    f.push("read as pi " + str(M.piVersion) + "'s " + M.reader + " reader \u00b7 pisess " + str(M.pisessVersion));
    if (M.redacted) { var ks = Object.keys(M.redacted); f.push(ks.length ? "redacted: " + ks.map(function (k) { return M.redacted[k] + " " + k; }).join(", ") : "redacted: nothing found"); }
    if (M.images === "omit") f.push("images omitted");
    f.forEach(function (t) { facts.appendChild(el("span", { text: t })); });
    if (D.findings.length) {
      var list = el("ul");
      D.findings.forEach(function (x) {
        var li = el("li", null, [el("span", { text: "[" + str(x.severity) + "] " + str(x.code) + ": " + str(x.message) + " " })]);
        if (x.entry !== null && x.entry !== undefined) li.appendChild(el("button", { type: "button", text: "line " + str(x.line) + " \u00b7 " + sid(x.entry), onclick: function () { go({ sel: x.entry }); } }));
        list.appendChild(li);
      });
      top.appendChild(el("details", { class: "findings" }, [el("summary", { text: "\u26a0 " + D.findings.length + " validate finding" + (D.findings.length === 1 ? "" : "s") }), list]));
    }
    var bp = Object.keys(D.branch);
    if (bp.length) {
      branchList.appendChild(el("summary", { text: "branches (" + bp.length + ")" }));
      bp.forEach(function (k) {
        var p = +k, b = D.branch[k];
        branchList.appendChild(el("div", { class: "muted", "data-branch-cost": true, "data-entry-id": idOf(p), "data-entries": b[0], "data-tokens": b[1], "data-cost": b[2],
          text: sid(p) + " \u00bb " + count(b[0], "entry", "entries") + " \u00b7 " + kfmt(b[1]) + " tok \u00b7 " + money(b[2]), onclick: function () { go({ sel: p }); } }));
      });
    } else branchList.hidden = true;
  })();

  // the prompts: the user messages of the active path, or of the whole tree
  var promptsAll = false;
  function drawPrompts() {
    promptList.textContent = "";
    var list = [];
    for (var r = 0; r < R.pos.length; r++) { var p = R.pos[r]; if (p >= 0 && D.trace[p] && D.trace[p][0] === "u" && (promptsAll || R.active[r] === 1)) list.push(p); }
    promptList.appendChild(el("summary", { text: "prompts (" + list.length + (promptsAll ? ", every branch" : ", active path") + ")" }));
    promptList.appendChild(el("label", null, [el("input", { type: "checkbox", checked: promptsAll ? true : null, onchange: function (ev) { promptsAll = ev.target.checked; drawPrompts(); promptList.open = true; } }), " every branch"]));
    list.forEach(function (p) { promptList.appendChild(el("div", { "data-entry-id": idOf(p), "data-prompt": true, text: sid(p) + " " + D.preview[p], onclick: function () { go({ sel: p }); } })); });
  }
  drawPrompts();

  // --- tree rows (only those in view are in the DOM) ---------------------------------------------------
  // The tree's scroll position and height, read where its rows are drawn: scrollToSel runs right
  // after render() drew them and the selected node's pane, and reading them again there made the
  // browser lay out that pane at once, on every click (a fifth of a click's work), not in its frame.
  var treeTop = 0, treeH = 0;
  function drawTree() {
    spacer.style.height = (visible.length * ROWH) + "px";
    treeTop = treeBox.scrollTop; treeH = treeBox.clientHeight;
    var first = Math.max(0, Math.floor(treeTop / ROWH) - 10);
    var last = Math.min(visible.length, Math.ceil((treeTop + treeH) / ROWH) + 10);
    spacer.textContent = "";
    for (var v = first; v < last; v++) spacer.appendChild(rowNode(visible[v], v));
  }
  var MARK = { active: "\u25cf", other: "\u25cb", compacted: "\u25d0" };
  function rowNode(r, v) {
    var p = R.pos[r], fl = flagsOf(r), active = R.active[r] === 1;
    var compacted = fl.indexOf("compacted") >= 0 || fl.indexOf("retained") >= 0;
    var row = el("div", { class: "row", role: "treeitem", "data-row": true, "data-entry-id": idOf(p), "data-active": active ? "1" : "0",
      "data-kind": D.words[D.word[p]], "data-type": str(D.type[p]), "data-leaf": fl.indexOf("leaf") >= 0 ? "1" : null,
      "aria-selected": p === state.sel ? "true" : "false" });
    row.style.top = (v * ROWH) + "px";
    var ind = D.rows.indents[R.indent[r]];
    row.appendChild(el("span", { class: "g", text: ind }));
    if (foldable(p)) row.appendChild(el("button", { type: "button", class: "fold", tabindex: "-1", "aria-label": state.folded[p] ? "unfold" : "fold", text: state.folded[p] ? "\u25b8" : "\u25be",
      onclick: function (ev) { ev.stopPropagation(); state.folded[p] = !state.folded[p]; rebuildVisible(); drawTree(); } }));
    row.appendChild(el("span", { class: "m", text: (active ? (compacted ? MARK.compacted : MARK.active) : MARK.other) + " " }));
    row.appendChild(el("span", { class: "i", text: sid(p) + " " }));
    row.appendChild(el("span", { class: "w " + (D.styles[D.word[p]] || ""), text: D.words[D.word[p]] + " " }));
    if (D.label[p] !== undefined) row.appendChild(el("span", { class: "tag", text: "[" + str(D.label[p]).slice(0, 30) + "] " }));
    if (fl.indexOf("checkpoint") >= 0) row.appendChild(el("span", { class: "cp", text: "\u25c6 checkpoint " }));
    if (fl.indexOf("edited") >= 0) row.appendChild(el("span", { class: "warn", text: "\u270e edited " }));
    if (fl.indexOf("hidden") >= 0) row.appendChild(el("span", { class: "warn", text: "\u2205 hidden " }));
    if (fl.indexOf("dangling") >= 0) row.appendChild(el("span", { class: "warn", text: "\u26a0 parent missing " }));
    if (fl.indexOf("cycle") >= 0) row.appendChild(el("span", { class: "warn", text: "\u26a0 on a parentId cycle " }));
    if (fl.indexOf("self_parent") >= 0) row.appendChild(el("span", { class: "warn", text: "\u26a0 its own parent " }));
    if (findingsAt[p]) row.appendChild(el("span", { class: "badge", title: "validate findings", text: "\u26a0" + findingsAt[p].length + " " }));
    if (fl.indexOf("leaf") >= 0) row.appendChild(el("span", { class: "leafm", text: "\u25c0 leaf" })), row.appendChild(doc.createTextNode(" "));
    var b = D.branch[p];
    if (b) row.appendChild(el("span", { class: "cost", text: "\u00bb " + count(b[0], "entry", "entries") + " \u00b7 " + kfmt(b[1]) + " tok \u00b7 " + money(b[2]) + " " }));
    row.appendChild(el("span", { class: "pv", text: D.preview[p] }));
    row.title = idOf(p);
    return row;
  }
  treeBox.addEventListener("scroll", function () { drawTree(); });
  treeBox.addEventListener("click", function (ev) {
    var r = ev.target.closest && ev.target.closest("[data-row]"); if (!r) return;
    var p = posOfId(r.getAttribute("data-entry-id"));
    if (p >= 0) { go({ sel: p }); if (innerWidth <= 760) setDrawer(false); }
  });
  function scrollToSel() {
    var v = visibleAt.has(rowOf[state.sel]) ? visibleAt.get(rowOf[state.sel]) : -1;
    if (v < 0) return;
    var y = v * ROWH;
    if (y < treeTop || y + ROWH > treeTop + treeH) treeBox.scrollTop = Math.max(0, y - treeH / 3);
  }
  var byId = null;
  function posOfId(id) {
    if (id === null || id === undefined) return -1;
    if (!byId) { byId = new Map(); for (var p = 0; p < N; p++) byId.set(idOf(p), p); }
    if (byId.has(id)) return byId.get(id);
    var found = -1;  // a unique prefix
    for (var k = 0; k < N; k++) if (idOf(k).indexOf(id) === 0) { if (found >= 0) return -1; found = k; }
    return found;
  }

  // --- panes --------------------------------------------------------------------------------------------
  // a long list (a context of thousands of messages, a long path or trace) is drawn WINDOW items at a
  // time: the browser lays out what can be seen, not 15,000 messages on every click; the rest follows
  // as the pane is scrolled to its end (or at once: the "draw all" button, printing).  The line after
  // the items carries data-more (how many are not drawn yet).
  var WINDOW = 250, windows = [];
  function windowed(pane, box, total, drawOne, one, many, whole) {
    var at = 0, rest = null, seen = null;
    function more(all) {
      var end = all ? total : Math.min(total, at + WINDOW), frag = doc.createDocumentFragment();
      for (; at < end; at++) frag.appendChild(drawOne(at));
      if (state.q && rest) highlight(frag, state.q);  // (the first window is highlighted with the pane)
      if (rest && rest.parentNode === box) box.insertBefore(frag, rest); else box.appendChild(frag);
      if (at < total) {
        if (!rest) {
          rest = el("p", { class: "muted more-items" }, [el("span"), el("button", { type: "button", class: "more", text: "draw all", onclick: function () { more(true); } })]);
          pane.appendChild(rest);
          if (typeof IntersectionObserver === "function") {
            seen = new IntersectionObserver(function (es) { if (es.some(function (e) { return e.isIntersecting; })) more(false); });
            seen.observe(rest); windows.push(seen);
          }
        }
        else if (seen) { seen.unobserve(rest); seen.observe(rest); }  // (asks again: still in view after this window, the next one)
        rest.setAttribute("data-more", String(total - at));
        rest.firstChild.textContent = "\u2026 " + count(total - at, "more " + one, "more " + many) + ", drawn as you scroll ";
      } else if (rest) { if (seen) seen.disconnect(); rest.remove(); }
    }
    more(!!whole);
  }
  function facts2(pairs) {
    var dl = el("dl", { class: "facts-dl" });
    pairs.forEach(function (x) { if (x[1] === null || x[1] === undefined || x[1] === "") return; dl.appendChild(el("dt", { text: x[0] })); dl.appendChild(el("dd", { text: String(x[1]) })); });
    return dl;
  }
  function drawEntry(pane, p) {
    var prev = D.parent[p], t = D.time[p];
    var since = prev >= 0 && typeof D.time[prev] === "number" && typeof t === "number" ? dur(t - D.time[prev]) + " after " + sid(prev) : "";
    var u = D.usage[p];
    pane.appendChild(facts2([["Entry", idOf(p)], ["Type", str(D.type[p]) + " \u00b7 " + D.words[D.word[p]]], ["Parent", prev >= 0 ? idOf(prev) : "(root)"],
      ["Time", when(t, true)], ["Since the entry before", since], ["Label", D.label[p]], ["Placement", D.place[p]],
      ["Usage", u ? num(u[0]) + " tokens \u00b7 " + money(u[1]) : ""], ["Children", kids[p] ? kids[p].length : 0]]));
    if (findingsAt[p]) findingsAt[p].forEach(function (k) { var f = D.findings[k]; pane.appendChild(el("p", { class: "error", text: "\u26a0 " + str(f.code) + ": " + str(f.message) })); });
    var v = D.entry[p];
    if (typeof v === "number") pane.appendChild(messageNode(msg(v), p, 0, null));
    else if (v && typeof v === "object") {
      var rest = {}, projects = v["\u0000projects"];
      for (var k in v) if (k !== "\u0000projects") rest[k] = v[k];
      if (Object.keys(rest).length) pane.appendChild(el("pre", { text: JSON.stringify(rest, null, 2) }));
      if (projects) {  // its summary or content: the messages it becomes in a context
        pane.appendChild(el("p", { class: "muted", text: "what it puts in a context:" }));
        projects.forEach(function (i) { pane.appendChild(messageNode(msg(i), p, 0, null)); });
      }
    }
  }
  function drawPath(pane, p) {
    var path = pathTo(p), ctx = contextAt(p), inCtx = {};
    if (ctx.segs) ctx.segs.forEach(function (s) { inCtx[s[0]] = 1; });
    pane.appendChild(el("p", { class: "muted", text: count(path.length, "entry", "entries") + " from the root to " + sid(p) + " (dimmed: not in the context there)" }));
    var ol = el("ol", { class: "pathlist" });
    pane.appendChild(ol);
    windowed(pane, ol, path.length, function (k) {
      var q = path[k];
      return el("li", { "data-entry-id": idOf(q), class: inCtx[q] ? null : "out", onclick: function () { go({ sel: q }); },
        text: sid(q) + "  " + D.words[D.word[q]] + "  " + D.preview[q] });
    }, "entry", "entries");
  }
  function ctxMessages(p) {
    var c = contextAt(p); if (c.error !== undefined) return c;
    var items = [];
    c.segs.forEach(function (s) {
      var mark = s[2] === 1 ? "edited" : s[2] === 2 ? "hidden" : null;
      if (mark === "hidden") { if (state.original) (s[3] || []).forEach(function (m) { items.push([m, s[0], "hidden"]); }); return; }
      s[1].forEach(function (m) { items.push([m, s[0], mark]); });
    });
    return { items: items };
  }
  function drawContext(pane, p, _view, whole) {
    var c = ctxMessages(p);
    if (c.error !== undefined) { pane.appendChild(el("p", { class: "error", text: "pi cannot build the context here: " + c.error })); return; }
    var size = 0, shown = 0;
    c.items.forEach(function (x) { if (x[2] !== "hidden") { size += D.msize[x[0]]; shown++; } });
    var sp = spentTo(p), tokens = sp[0], cost = sp[1];
    var toggle = el("label", { class: state.original ? "toggle on" : "toggle" }, [el("input", { type: "checkbox", "data-toggle": "original", checked: state.original ? true : null,
      onchange: function (ev) { state.original = ev.target.checked; render(); } }),
      state.original ? " original: ON \u2014 what context edits hide is shown, dimmed and marked \u2205 hidden (the model does not see it)" : " original: show what context edits hide"]);
    pane.appendChild(el("p", { class: "muted", text: count(shown, "message", "messages") + " \u00b7 ~" + num(Math.floor(size / 4)) + " tokens (a quarter of their JSON) \u00b7 spent up to here: " + kfmt(tokens) + " tokens, " + money(cost) }));
    pane.appendChild(toggle);
    var n = 0, numbers = c.items.map(function (x) { return x[2] === "hidden" ? 0 : ++n; });
    windowed(pane, pane, c.items.length, function (k) { var x = c.items[k]; return messageNode(msg(x[0]), x[1], numbers[k], x[2]); },
      "message", "messages", whole);
    if (!c.items.length) pane.appendChild(el("p", { class: "muted", text: "(the context is empty)" }));
  }

  // --- trace: the turns of the path (the steps' facts are the core's; results matched on the path) ----
  function callText(q, k) {  // the k-th tool call of entry q's message: name(its one argument, or the arguments)
    var m = msgOfEntry(q), blocks = m && Array.isArray(m.content) ? m.content.filter(function (b) { return b && b.type === "toolCall"; }) : [], b = blocks[k];
    if (!b) return "?";
    var a = b.arguments, keys = a && typeof a === "object" && !Array.isArray(a) ? Object.keys(a) : null;
    var inner = keys && keys.length === 1 ? str(a[keys[0]]) : str(a);
    inner = inner.replace(/\s+/g, " ");
    return str(b.name) + "(" + (inner.length > 60 ? inner.slice(0, 59) + "\u2026" : inner) + ")";
  }
  function traceOf(pos) {
    var path = pathTo(pos), results = {}, turns = [{ index: 0, entry: -1, prompt: "", time: null, end: null, steps: [] }], prev = null;
    path.forEach(function (q) { var it = D.trace[q]; if (it && it[0] === "r") results[it[1]] = q; });
    path.forEach(function (q) {
      var it = D.trace[q], ms = D.time[q], last = turns[turns.length - 1];
      if (it && it[0] === "u") { turns.push({ index: turns.length, entry: q, prompt: D.preview[q], time: ms, end: ms, steps: [] }); last = turns[turns.length - 1]; }
      else if (it && it[0] === "s") {
        last.steps.push({ entry: q, word: D.words[D.word[q]], text: D.preview[q], tin: it[1], tout: it[2], cost: it[3], error: it[4], time: ms,
          duration: typeof ms === "number" && typeof prev === "number" ? ms - prev : null,
          calls: it[5].map(function (c, k) { var r = results[c]; return { args: callText(q, k), result: r === undefined ? -1 : r, ok: r === undefined ? null : !D.trace[r][2], preview: r === undefined ? "" : D.preview[r] }; }) });
      }
      if (typeof ms === "number") { prev = ms; if (last.time === null || last.time === undefined) last.time = ms; last.end = ms; }
    });
    return turns[0].steps.length ? turns : turns.slice(1);
  }
  function drawTrace(pane, p) {
    var turns = traceOf(p);
    if (!turns.length) { pane.appendChild(el("p", { class: "muted", text: "(no turns on this path)" })); return; }
    var all = { tokens: 0, cost: 0, failed: 0 }, sums = turns.map(function (t) {
      var tokens = 0, cost = 0, errs = 0;
      t.steps.forEach(function (s) { tokens += s.tin + s.tout; cost += s.cost; errs += s.calls.filter(function (c) { return c.ok === false; }).length + (s.error ? 1 : 0); });
      all.tokens += tokens; all.cost += cost; all.failed += errs;
      return [tokens, cost, errs];
    });
    pane.appendChild(el("p", { class: "muted", text: count(turns.length, "turn", "turns") + " \u00b7 " + kfmt(all.tokens) + " tokens \u00b7 " + money(all.cost) + (all.failed ? " \u00b7 " + count(all.failed, "failure", "failures") : "") }));
    windowed(pane, pane, turns.length, function (k) {
      var t = turns[k], tokens = sums[k][0], cost = sums[k][1], errs = sums[k][2];
      var head = "Turn " + t.index + (t.prompt ? " \u00b7 " + t.prompt.slice(0, 120) : "") + " \u00b7 " + t.steps.length + " step" + (t.steps.length === 1 ? "" : "s") +
        (t.time !== null && t.end !== null ? " \u00b7 " + dur(t.end - t.time) : "") + " \u00b7 " + kfmt(tokens) + " tok \u00b7 " + money(cost) + (errs ? " \u00b7 \u2717 " + errs : "");
      var box = el("div", { class: "turn", "data-entry-id": t.entry >= 0 ? idOf(t.entry) : null }, [el("h3", { text: head })]);
      if (t.entry >= 0) box.firstChild.addEventListener("click", function () { go({ sel: t.entry }); });
      t.steps.forEach(function (s) {
        var line = el("div", { class: "step", "data-entry-id": idOf(s.entry), onclick: function () { go({ sel: s.entry }); } },
          [sid(s.entry) + " " + when(s.time, false) + (s.duration !== null ? " +" + dur(s.duration) : "") + "  " + s.word + "  " + s.text.slice(0, 160) +
            (s.tin || s.tout ? "  (" + kfmt(s.tin) + " in, " + kfmt(s.tout) + " out, " + money(s.cost) + ")" : "")]);
        if (s.error) line.appendChild(el("span", { class: "bad", text: "  \u2717 " + s.error }));
        s.calls.forEach(function (c) {
          line.appendChild(el("div", { class: c.ok === false ? "bad" : null, "data-entry-id": c.result >= 0 ? idOf(c.result) : null },
            ["    " + (c.ok === null ? "\u2026" : c.ok ? "\u2713" : "\u2717") + " " + c.args + (c.preview ? "  \u2192 " + c.preview.slice(0, 100) : "")]));
        });
        box.appendChild(line);
      });
      return box;
    }, "turn", "turns");
  }

  // --- compare: what `pisess diff` says (alignment: difflib's SequenceMatcher, ported) -------------------
  function Matcher(a, b, autojunk) {
    var b2j = new Map();
    for (var j = 0; j < b.length; j++) { var l = b2j.get(b[j]); if (!l) b2j.set(b[j], l = []); l.push(j); }
    if (autojunk && b.length >= 200) { var ntest = Math.floor(b.length / 100) + 1; b2j.forEach(function (v, k) { if (v.length > ntest) b2j.delete(k); }); }
    function longest(alo, ahi, blo, bhi) {
      var bi = alo, bj = blo, bs = 0, j2len = new Map();
      for (var i = alo; i < ahi; i++) {
        var nj = new Map(), js = b2j.get(a[i]) || [];
        for (var x = 0; x < js.length; x++) {
          var jj = js[x]; if (jj < blo) continue; if (jj >= bhi) break;
          var k = (j2len.get(jj - 1) || 0) + 1; nj.set(jj, k);
          if (k > bs) { bi = i - k + 1; bj = jj - k + 1; bs = k; }
        }
        j2len = nj;
      }
      while (bi > alo && bj > blo && b2j.has(b[bj - 1]) && a[bi - 1] === b[bj - 1]) { bi--; bj--; bs++; }
      while (bi + bs < ahi && bj + bs < bhi && b2j.has(b[bj + bs]) && a[bi + bs] === b[bj + bs]) bs++;
      return [bi, bj, bs];
    }
    function blocks() {
      var queue = [[0, a.length, 0, b.length]], m = [];
      while (queue.length) {
        var q = queue.pop(), x = longest(q[0], q[1], q[2], q[3]), i = x[0], j = x[1], k = x[2];
        if (k) { m.push(x); if (q[0] < i && q[2] < j) queue.push([q[0], i, q[2], j]); if (i + k < q[1] && j + k < q[3]) queue.push([i + k, q[1], j + k, q[3]]); }
      }
      m.sort(function (u, v) { return u[0] - v[0] || u[1] - v[1] || u[2] - v[2]; });
      var i1 = 0, j1 = 0, k1 = 0, out = [];
      m.forEach(function (x) { if (i1 + k1 === x[0] && j1 + k1 === x[1]) k1 += x[2]; else { if (k1) out.push([i1, j1, k1]); i1 = x[0]; j1 = x[1]; k1 = x[2]; } });
      if (k1) out.push([i1, j1, k1]);
      out.push([a.length, b.length, 0]);
      return out;
    }
    function opcodes() {
      var i = 0, j = 0, out = [];
      blocks().forEach(function (x) {
        var tag = i < x[0] && j < x[1] ? "replace" : i < x[0] ? "delete" : j < x[1] ? "insert" : "";
        if (tag) out.push([tag, i, x[0], j, x[1]]);
        i = x[0] + x[2]; j = x[1] + x[2];
        if (x[2]) out.push(["equal", x[0], i, x[1], j]);
      });
      return out;
    }
    return { opcodes: opcodes };
  }
  function splitlines(t) {
    if (!t) return [];
    var parts = t.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/);
    if (parts.length && parts[parts.length - 1] === "") parts.pop();
    return parts;
  }
  function unifiedDiff(a, b, n) {  // difflib.unified_diff(..., n, lineterm="") without its two header lines
    var codes = Matcher(a, b, true).opcodes(), out = [];
    if (!codes.length) codes = [["equal", 0, 1, 0, 1]];
    if (codes[0][0] === "equal") { var c = codes[0]; codes[0] = [c[0], Math.max(c[1], c[2] - n), c[2], Math.max(c[3], c[4] - n), c[4]]; }
    var e = codes[codes.length - 1];
    if (e[0] === "equal") codes[codes.length - 1] = [e[0], e[1], Math.min(e[2], e[1] + n), e[3], Math.min(e[4], e[3] + n)];
    var groups = [], group = [];
    codes.forEach(function (x) {
      var tag = x[0], i1 = x[1], i2 = x[2], j1 = x[3], j2 = x[4];
      if (tag === "equal" && i2 - i1 > n + n) { group.push([tag, i1, Math.min(i2, i1 + n), j1, Math.min(j2, j1 + n)]); groups.push(group); group = []; i1 = Math.max(i1, i2 - n); j1 = Math.max(j1, j2 - n); }
      group.push([tag, i1, i2, j1, j2]);
    });
    if (group.length && !(group.length === 1 && group[0][0] === "equal")) groups.push(group);
    function range(start, stop) { var beg = start + 1, len = stop - start; if (len === 1) return String(beg); if (!len) beg -= 1; return beg + "," + len; }
    groups.forEach(function (g) {
      var f = g[0], l = g[g.length - 1];
      out.push("@@ -" + range(f[1], l[2]) + " +" + range(f[3], l[4]) + " @@");
      g.forEach(function (x) {
        if (x[0] === "equal") { a.slice(x[1], x[2]).forEach(function (t) { out.push(" " + t); }); return; }
        if (x[0] === "replace" || x[0] === "delete") a.slice(x[1], x[2]).forEach(function (t) { out.push("-" + t); });
        if (x[0] === "replace" || x[0] === "insert") b.slice(x[3], x[4]).forEach(function (t) { out.push("+" + t); });
      });
    });
    return out;
  }
  function messageText(m) {  // diff.message_text
    if (!m || typeof m !== "object" || Array.isArray(m)) return "";
    if (typeof m.summary === "string") return m.summary;
    if (typeof m.content === "string") return m.content;
    if (Array.isArray(m.content)) return m.content.filter(function (b) { return b && typeof b === "object" && !Array.isArray(b) && b.type === "text" && typeof b.text === "string"; }).map(function (b) { return b.text; }).join("\n");
    if (m.role === "bashExecution") return m.output !== undefined && m.output !== null ? String(m.output) : "";
    return "";
  }
  function align(ma, mb) {
    var ka = ma.map(function (x) { return D.same[x[0]]; }), kb = mb.map(function (x) { return D.same[x[0]]; });
    var p = 0; while (p < ka.length && p < kb.length && ka[p] === kb[p]) p++;
    var out = p ? [{ op: "same", a: 0, b: 0, count: p }] : [];
    Matcher(ka.slice(p), kb.slice(p), false).opcodes().forEach(function (x) {
      var i1 = x[1] + p, i2 = x[2] + p, j1 = x[3] + p, j2 = x[4] + p;
      if (x[0] === "equal") { out.push({ op: "same", a: i1, b: j1, count: i2 - i1 }); return; }
      var rem = [], add = [], k;
      for (k = i1; k < i2; k++) rem.push(k);
      for (k = j1; k < j2; k++) add.push(k);
      while (rem.length && add.length && D.shape[ma[rem[0]][0]] === D.shape[mb[add[0]][0]]) {
        var i = rem.shift(), j = add.shift();
        out.push({ op: "changed", a: i, b: j, count: 1, diff: unifiedDiff(splitlines(messageText(msg(ma[i][0]))), splitlines(messageText(msg(mb[j][0]))), 2) });
      }
      rem.forEach(function (i) { out.push({ op: "removed", a: i, b: null, count: 1 }); });
      add.forEach(function (j) { out.push({ op: "added", a: null, b: j, count: 1 }); });
    });
    return out;
  }
  function sideSummary(after, items) {
    var s = { entryCount: after.length, userTurnCount: 0, assistantMessageCount: 0, toolCallCount: 0, failedToolCallCount: 0,
      "tokens.input": 0, "tokens.output": 0, "tokens.cacheRead": 0, "tokens.cacheWrite": 0, cost: 0, wallMs: null,
      compactionCount: 0, contextEditCount: 0, contextMessageCount: 0, contextTokens: 0 }, lists = { models: [], thinkingLevels: [], filesWritten: [] }, calls = {}, times = [];
    after.forEach(function (q) {
      if (typeof D.time[q] === "number") times.push(D.time[q]);
      var d = D.did[q]; if (!d) return;
      s.userTurnCount += d.u || 0; s.assistantMessageCount += d.a || 0; s.failedToolCallCount += d.f || 0;
      s.compactionCount += d.c || 0; s.contextEditCount += d.e || 0; s.cost += d.$ || 0;
      if (d.t) { s["tokens.input"] += d.t[0]; s["tokens.output"] += d.t[1]; s["tokens.cacheRead"] += d.t[2]; s["tokens.cacheWrite"] += d.t[3]; }
      [["m", "models"], ["l", "thinkingLevels"], ["w", "filesWritten"]].forEach(function (x) { (d[x[0]] || []).forEach(function (v) { if (x[0] === "m") v = D.modelNames[v]; if (lists[x[1]].indexOf(v) < 0) lists[x[1]].push(v); }); });
      if (d.k) for (var name in d.k) { calls[name] = (calls[name] || 0) + d.k[name]; s.toolCallCount += d.k[name]; }
    });
    s.cost = parseFloat(s.cost.toFixed(10));
    if (times.length) s.wallMs = times.length > 1 ? Math.max.apply(null, times) - Math.min.apply(null, times) : 0;
    var shown = items.filter(function (x) { return x[2] !== "hidden"; });
    s.contextMessageCount = shown.length;
    var size = 0; shown.forEach(function (x) { size += D.msize[x[0]]; }); s.contextTokens = Math.floor(size / 4);
    return { stats: s, lists: lists, calls: calls };
  }
  function drawCompare(pane, p) {
    var b = state.b === null || state.b === undefined || state.b < 0 ? p : state.b;
    var pa = cutPath(p), pb = cutPath(b), n = 0;
    while (n < pa.length && n < pb.length && (pa[n] === pb[n] || (idOf(pa[n]) === idOf(pb[n]) && D.type[pa[n]] === D.type[pb[n]]))) n++;
    var afterA = pa.slice(n), afterB = pb.slice(n);
    var relation = !afterA.length && !afterB.length ? "same" : "branches";
    pane.setAttribute("data-a", idOf(p)); pane.setAttribute("data-b", idOf(b));
    pane.setAttribute("data-parted-after", n ? idOf(pa[n - 1]) : ""); pane.setAttribute("data-relation", relation);
    var ca = ctxMessages(p), cb = ctxMessages(b);
    pane.appendChild(el("p", null, ["A ", el("strong", { text: sid(p) }), " \u2194 B ", el("strong", { text: sid(b) }), " \u00b7 " + relation + (n ? " \u00b7 parted after " + sid(pa[n - 1]) + " (" + count(n, "entry", "entries") + " in common)" : " \u00b7 nothing in common") + "  ",
      el("button", { type: "button", text: "pin A as B", title: "compare other nodes against this one (b)", onclick: function () { go({ b: p }); } }),
      " ", el("button", { type: "button", text: "B = the leaf", onclick: function () { go({ b: M.leaf }); } })]));
    if (ca.error !== undefined || cb.error !== undefined) { pane.appendChild(el("p", { class: "error", text: "pi cannot build a context here: " + (ca.error || cb.error) })); return; }
    var ma = ca.items.filter(function (x) { return x[2] !== "hidden"; }), mb = cb.items.filter(function (x) { return x[2] !== "hidden"; });
    var sa = sideSummary(afterA, ma), sb = sideSummary(afterB, mb);
    var table = el("table", { class: "cmp" }, [el("tr", null, [el("th", { text: "after the parting point" }), el("th", { text: "A " + sid(p) }), el("th", { text: "B " + sid(b) })])]);
    Object.keys(sa.stats).forEach(function (k) {
      function cell(side, v) { return el("td", { "data-stat": k, "data-side": side, "data-value": v === null ? "" : String(v), text: v === null ? "\u2014" : k === "cost" ? money(v) : k === "wallMs" ? dur(v) : num(v) }); }
      table.appendChild(el("tr", null, [el("th", { text: k }), cell("a", sa.stats[k]), cell("b", sb.stats[k])]));
    });
    [["models", sa.lists.models, sb.lists.models], ["thinkingLevels", sa.lists.thinkingLevels, sb.lists.thinkingLevels], ["filesWritten", sa.lists.filesWritten, sb.lists.filesWritten]].forEach(function (x) {
      table.appendChild(el("tr", null, [el("th", { text: x[0] }), el("td", { "data-stat": x[0], "data-side": "a", text: x[1].join(", ") }), el("td", { "data-stat": x[0], "data-side": "b", text: x[2].join(", ") })]));
    });
    pane.appendChild(table);
    var steps = align(ma, mb), rows = el("table", { class: "cmp" });
    var shared = 0; steps.forEach(function (x) { if (x.op === "same") shared += x.count; });
    pane.appendChild(el("p", { class: "muted", text: count(shared, "message", "messages") + " shared \u00b7 " + (steps.every(function (x) { return x.op === "same"; }) ? "the same context" : "the contexts differ") }));
    steps.forEach(function (x) {
      var ea = x.a === null ? "" : idOf(ma[x.a][1]), eb = x.b === null ? "" : idOf(mb[x.b][1]);
      var tr = el("tr", { "data-op": x.op, "data-count": x.count, "data-index-a": x.a === null ? "" : x.a, "data-index-b": x.b === null ? "" : x.b, "data-entry-id-a": ea, "data-entry-id-b": eb });
      function side(cls, i, list) {
        var td = el("td", { class: cls }); if (i === null) return td;
        var m = msg(list[i][0]) || {};
        td.appendChild(el("div", { class: "muted", "data-entry-id": idOf(list[i][1]), text: (i + 1) + ". " + (TITLES[m.role] || str(m.role)) + " \u00b7 " + sid(list[i][1]) }));
        td.appendChild(el("div", { text: messageText(m).slice(0, 300) }));
        return td;
      }
      if (x.op === "same") {
        tr.appendChild(el("td", { colspan: "2", class: "muted", text: x.count + " message" + (x.count === 1 ? "" : "s") + " the same (A " + (x.a + 1) + "\u2013" + (x.a + x.count) + ", B " + (x.b + 1) + "\u2013" + (x.b + x.count) + ")" }));
      } else { tr.appendChild(side("a", x.a, ma)); tr.appendChild(side("b", x.b, mb)); }
      rows.appendChild(tr);
      if (x.diff) rows.appendChild(el("tr", { class: "textdiff" }, [el("td", { colspan: "2" }, [el("pre", null, x.diff.map(function (t) { return el("div", { class: "diffline " + (t[0] === "+" ? "add" : t[0] === "-" ? "del" : ""), text: t }); }))])]));
    });
    pane.appendChild(rows);
  }
  var drawers = { entry: drawEntry, path: drawPath, context: drawContext, trace: drawTrace, compare: drawCompare };

  var retry = 0;
  function redrawWhenRead() {  // a message drawn before the browser read it: draw again once it has
    if (retry || !missing.size) return;
    retry = setTimeout(function () {
      retry = 0;
      var read = false; missing.forEach(function (c) { if (chunkRead(c)) read = true; });
      if (read) { missing.clear(); render(); } else redrawWhenRead();
    }, 50);
  }
  function render() {
    var p = state.sel;
    missing.clear();
    windows.forEach(function (w) { w.disconnect(); }); windows = [];
    rebuildVisible(); drawTree();
    TABS.forEach(function (t) {
      var b = tabBar.querySelector('[data-tab="' + t + '"]'); b.setAttribute("aria-selected", t === state.tab ? "true" : "false");
      panes[t].hidden = t !== state.tab; panes[t].textContent = "";
    });
    panes.entry.setAttribute("data-entry-id", p >= 0 ? idOf(p) : "");
    nodeId.textContent = p >= 0 ? idOf(p) : "";
    if (p >= 0) drawers[state.tab](panes[state.tab], p, panes[state.tab]);
    if (state.q) highlight(panes[state.tab], state.q);
    redrawWhenRead();
  }

  // --- search -------------------------------------------------------------------------------------------
  // search: the messages' text is searched as it is stored (JSON), then each candidate entry's texts
  // are checked; an entry's texts are the strings `pisess search` looks in (pisess.core.model.kinds,
  // texts: the same fields, role by role), so the hits are search's and their placements the core's
  function stringsOf(x, out) {  // kinds._strings: every string value (not keys)
    if (typeof x === "string") out.push(x);
    else if (Array.isArray(x)) x.forEach(function (y) { stringsOf(y, out); });
    else if (x && typeof x === "object") for (var k in x) stringsOf(x[k], out);
    return out;
  }
  function textBlocks(c, out) {
    if (typeof c === "string") out.push(c);
    else if (Array.isArray(c)) c.forEach(function (b) { if (b && typeof b === "object" && b.type === "text" && typeof b.text === "string") out.push(b.text); });
    return out;
  }
  function systemTexts(m, out) {
    textBlocks(m.content, out);
    if (m.sections && typeof m.sections === "object" && !Array.isArray(m.sections)) for (var k in m.sections) if (typeof m.sections[k] === "string") out.push(m.sections[k]);
    if (Array.isArray(m.toolsAdded)) m.toolsAdded.forEach(function (t) {
      if (!t || typeof t !== "object" || Array.isArray(t)) return;
      if (typeof t.name === "string" && t.name) out.push(t.name);
      if (typeof t.description === "string") out.push(t.description);
    });
    return out;
  }
  function messageTexts(m, out) {
    if (!m || typeof m !== "object" || Array.isArray(m)) return out;
    var role = m.role;
    if (role === "user" || role === "toolResult" || role === "custom" || role === "hookMessage") textBlocks(m.content, out);
    else if (role === "assistant") {
      (Array.isArray(m.content) ? m.content : [m.content]).forEach(function (b) {
        if (typeof b === "string") { out.push(b); return; }
        if (!b || typeof b !== "object" || Array.isArray(b)) return;
        if (b.type === "text" && typeof b.text === "string") out.push(b.text);
        else if (b.type === "thinking" && typeof b.thinking === "string") out.push(b.thinking);
        else if (b.type === "toolCall") { if (typeof b.name === "string" && b.name) out.push(b.name); stringsOf(b.arguments, out); }
      });
      if (typeof m.errorMessage === "string") out.push(m.errorMessage);
    } else if (role === "bashExecution") {
      if (typeof m.command === "string") out.push(m.command); else stringsOf(m.command, out);
      if (typeof m.output === "string") out.push(m.output);
    } else if (role === "branchSummary" || role === "compactionSummary") { if (typeof m.summary === "string") out.push(m.summary); }
    else if (role === "system") systemTexts(m, out);
    return out;
  }
  // the message an entry of another type puts in a context carries its text (its summary, its content)
  var PROJECTED = { compaction: "compactionSummary", branch_summary: "branchSummary", custom_message: "custom" };
  function entryTexts(p, withProjected) {
    var v = D.entry[p], out = [], t = D.type[p];
    if (typeof v === "number") return messageTexts(msg(v), out);
    if (!v || typeof v !== "object") return out;
    if ((t === "compaction" || t === "branch_summary") && typeof v.summary === "string") out.push(v.summary);
    if (t === "compaction" && v.systemMessage && typeof v.systemMessage === "object" && !Array.isArray(v.systemMessage)) systemTexts(v.systemMessage, out);
    if (t === "label" && typeof v.label === "string") out.push(v.label);
    if (t === "session_info" && typeof v.name === "string") out.push(v.name);
    if (t === "custom_message") textBlocks(v.content, out);
    if (t === "context_edit" && v.replacement && typeof v.replacement === "object" && !Array.isArray(v.replacement)) textBlocks(v.replacement.content, out);
    if (withProjected && PROJECTED[t]) (v["\u0000projects"] || []).forEach(function (k) { var m = msg(k); if (m && m.role === PROJECTED[t]) messageTexts(m, out); });
    return out;
  }
  function holds(strings, ql) { for (var i = 0; i < strings.length; i++) if (strings[i].toLowerCase().indexOf(ql) >= 0) return true; return false; }
  var lowered = [], loweredLines = [], entriesOfMsg = null, searchWaits = false;
  function lineOf(starts, at) { var lo = 0, hi = starts.length - 1; while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (starts[mid] <= at) lo = mid; else hi = mid - 1; } return lo; }
  // where the messages' stored text (JSON) may hold the lowered query: every message whose texts hold
  // it, and maybe more (holds decides).  An ASCII query is matched without case on the text as it is
  // (no lowered copy of 200 MB; toLowerCase also makes k of U+212A and i of U+0130: they match too)
  function finder(ql) {
    var needle = JSON.stringify(ql).slice(1, -1).replace(/<\//g, "<\\/").replace(/<!/g, "\\u003c!");
    if (/^[\x00-\x7f]*$/.test(needle)) {
      var re = new RegExp(needle.replace(/[.*+?^${}()|[\]\\\/]/g, "\\$&").replace(/k/g, "[k\\u212a]").replace(/i/g, "[i\\u0130]"), "gi");
      return { lines: function (c) { return chunkLines[c]; }, end: function (c) { return chunkText[c].length; },
        at: function (c, from) { re.lastIndex = from; var m = re.exec(chunkText[c]); return m ? m.index : -1; } };
    }
    return { lines: function (c) { lower(c); return loweredLines[c]; }, end: function (c) { return lower(c).length; },
      at: function (c, from) { return lower(c).indexOf(needle, from); } };
  }
  function lower(c) {  // (lowering keeps the lines: the messages hold no raw newline)
    if (lowered[c] === undefined) { lowered[c] = chunkText[c].toLowerCase(); loweredLines[c] = lineStarts(lowered[c]); }
    return lowered[c];
  }
  function search(q) {
    state.q = q; state.hits = []; state.hit = -1;
    if (!q) { hitsBox.hidden = true; return; }
    if (!allRead()) {  // every text is needed: search once the browser has read the whole page
      hitsBox.textContent = ""; hitsBox.hidden = false;
      hitsBox.appendChild(el("div", { class: "muted", text: "searching\u2026 (the page is still being read)" }));
      searchWaits = true;
      whenAllRead(function () { searchWaits = false; if (state.q === q) { search(q); render(); } });
      return;
    }
    if (entriesOfMsg === null) {
      entriesOfMsg = new Map();
      for (var p = 0; p < N; p++) {
        var v = D.entry[p], own = typeof v === "number" ? [v] : v && v["\u0000projects"] ? v["\u0000projects"] : [];
        own.forEach(function (k) { var l = entriesOfMsg.get(k); if (!l) entriesOfMsg.set(k, l = []); l.push(p); });
      }
    }
    var ql = q.toLowerCase(), find = finder(ql), hit = new Uint8Array(N), seen = new Set();
    for (var c = 0; c < CHUNK_START.length; c++) {
      var starts = find.lines(c), end = find.end(c);
      for (var at = find.at(c, 0); at >= 0; at = find.at(c, at + 1)) {
        var i = lineOf(starts, at), k = CHUNK_START[c] + i;
        if (!seen.has(k)) {
          seen.add(k);
          (entriesOfMsg.get(k) || []).forEach(function (e) { if (!hit[e] && holds(entryTexts(e, true), ql)) hit[e] = 1; });
        }
        at = i + 1 < starts.length ? starts[i + 1] - 1 : end;
      }
    }
    for (var e = 0; e < N; e++) {
      var v2 = D.entry[e];
      if (!hit[e] && v2 && typeof v2 === "object" && holds(entryTexts(e, false), ql)) hit[e] = 1;
    }
    for (var r = 0; r < R.pos.length; r++) { var x = R.pos[r]; if (x >= 0 && hit[x]) state.hits.push(x); }
    hitsBox.textContent = ""; hitsBox.hidden = false;
    hitsBox.appendChild(el("div", { class: "muted", text: state.hits.length + " entr" + (state.hits.length === 1 ? "y" : "ies") + " hold \u201c" + q + "\u201d  (n / N)" }));
    state.hits.slice(0, 500).forEach(function (x, k) {
      var raw = textOf(x), at = raw.toLowerCase().indexOf(ql);
      var snip = raw.slice(Math.max(0, at - 30), at + q.length + 60).replace(/\s+/g, " ");
      hitsBox.appendChild(el("div", { "data-hit": true, "data-entry-id": idOf(x), "data-placement": D.place[x], onclick: function () { state.hit = k; go({ sel: x }); if (!markedIn(panes[state.tab], x)) go({ tab: "entry" }); } },
        [el("span", { class: "pl", text: D.place[x] }), el("span", { text: sid(x) + " " + D.words[D.word[x]] + ": " + snip })]));
    });
  }
  function textOf(p) { return entryTexts(p, true).join("\n"); }
  function highlight(node, q) {
    var ql = q.toLowerCase(), pres = node.querySelectorAll("pre");
    for (var f = 0; f < pres.length; f++) { var whole = folded.get(pres[f]); if (whole !== undefined && whole.toLowerCase().indexOf(ql) >= 0) pres[f].textContent = whole; }
    var walker = doc.createTreeWalker(node, NodeFilter.SHOW_TEXT), list = [], t;
    while ((t = walker.nextNode())) if (t.nodeValue.toLowerCase().indexOf(ql) >= 0) list.push(t);
    list.forEach(function (tn) {
      var s = tn.nodeValue, low = s.toLowerCase(), frag = doc.createDocumentFragment(), i = 0, j;
      while ((j = low.indexOf(ql, i)) >= 0) { frag.appendChild(doc.createTextNode(s.slice(i, j))); frag.appendChild(el("mark", { text: s.slice(j, j + q.length) })); i = j + q.length; }
      frag.appendChild(doc.createTextNode(s.slice(i)));
      tn.parentNode.replaceChild(frag, tn);
    });
    var details = node.querySelectorAll("details"); for (var k = 0; k < details.length; k++) if (details[k].querySelector("mark")) details[k].open = true;
  }
  function markedIn(pane, p) {  // a drawn mark in what shows entry p
    var ms = pane.querySelectorAll("mark"), id = idOf(p);
    for (var k = 0; k < ms.length; k++) { var owner = ms[k].closest("[data-entry-id]"); if (owner && owner.getAttribute("data-entry-id") === id && ms[k].getClientRects().length) return true; }
    return false;
  }
  var searchTimer = 0;
  searchInput.addEventListener("input", function () { clearTimeout(searchTimer); searchTimer = setTimeout(function () { search(searchInput.value); writeHash(); render(); }, 120); });
  searchInput.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { ev.preventDefault(); clearTimeout(searchTimer); if (searchInput.value !== state.q) { search(searchInput.value); writeHash(); } nextHit(ev.shiftKey ? -1 : 1); treeBox.focus(); } if (ev.key === "Escape") treeBox.focus(); });
  function nextHit(d) {
    if (!state.hits.length) return;
    state.hit = (state.hit + d + state.hits.length) % state.hits.length;
    var hs = hitsBox.querySelectorAll("[data-hit]"); for (var k = 0; k < hs.length; k++) hs[k].setAttribute("aria-selected", k === state.hit ? "true" : "false");
    var p = state.hits[state.hit];
    go({ sel: p });
    if (!markedIn(panes[state.tab], p)) go({ tab: "entry" });  // the match is in the entry itself
    var m = view.querySelector("mark"); if (m && m.scrollIntoView) m.scrollIntoView({ block: "center" });
  }

  // --- navigation, links and keys ----------------------------------------------------------------------
  function go(ch) {
    if (ch.sel !== undefined && ch.sel >= 0) state.sel = ch.sel;
    if (ch.tab) state.tab = ch.tab;
    if (ch.b !== undefined) state.b = ch.b;
    render(); scrollToSel(); writeHash();
  }
  function hashFor(full) {
    var h = state.tab === "compare" ? "a=" + encodeURIComponent(idOf(state.sel)) + "&b=" + encodeURIComponent(idOf(state.b)) : "entry=" + encodeURIComponent(idOf(state.sel));
    h += "&tab=" + state.tab;
    if (state.q) h += "&q=" + encodeURIComponent(state.q);
    return full ? location.href.split("#")[0] + "#" + h : "#" + h;
  }
  var writing = false;
  function writeHash() { var h = hashFor(false); if (location.hash !== h) { writing = true; try { history.replaceState(null, "", h); } catch (e) { location.hash = h; } writing = false; } }
  function readLocation() {
    var h = new URLSearchParams(location.hash.slice(1)), s = new URLSearchParams(location.search), ch = {};
    var target = h.get("entry") || h.get("a") || s.get("targetId") || s.get("leafId");
    if (target) { var p = posOfId(target); if (p >= 0) ch.sel = p; }
    if (h.get("b")) { var b = posOfId(h.get("b")); if (b >= 0) ch.b = b; }
    var tab = h.get("tab"); if (tab && TABS.indexOf(tab) >= 0) ch.tab = tab; else if (h.get("a") && h.get("b")) ch.tab = "compare";
    var q = h.get("q"); if (q !== null && q !== state.q) { searchInput.value = q; search(q); }
    return ch;
  }
  addEventListener("hashchange", function () { if (!writing) go(readLocation()); });
  function copyLink() {
    var url = hashFor(true);
    function said(t) { copyBtn.textContent = t; setTimeout(function () { copyBtn.textContent = "copy link"; }, 1500); }
    copyBtn.title = url;
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(url).then(function () { said("copied"); }, function () { said("see the address bar"); });
    else said("see the address bar");
  }
  function setFilter(f) {
    state.filter = f;
    var bs = filterBar.querySelectorAll("[data-filter]"); for (var k = 0; k < bs.length; k++) bs[k].setAttribute("aria-pressed", bs[k].getAttribute("data-filter") === f ? "true" : "false");
    render(); scrollToSel();
  }
  function move(d) { var v = visibleAt.has(rowOf[state.sel]) ? visibleAt.get(rowOf[state.sel]) : -1; var nv = Math.max(0, Math.min(visible.length - 1, (v < 0 ? 0 : v) + d)); if (visible.length) go({ sel: R.pos[visible[nv]] }); }
  function branchPoint(d) {  // browse's [ and ]: the previous / next branch point among the rows shown
    var v = visibleAt.has(rowOf[state.sel]) ? visibleAt.get(rowOf[state.sel]) : (d > 0 ? -1 : visible.length);
    for (var w = v + d; w >= 0 && w < visible.length; w += d) { var p = R.pos[visible[w]]; if (kids[p] && kids[p].length > 1) { go({ sel: p }); return; } }
  }
  var KEYS = [["j / k", "next / previous row"], ["h / l", "parent / first child"], ["g / G", "first / last row"], ["L", "the leaf"],
    ["[ / ]", "previous / next branch point"], ["/", "search"], ["n / N", "next / previous hit"],
    ["e p c t d", "entry, path, context, trace, compare"], ["b", "compare against this node (pin it as B)"], ["?", "this help"]];
  function toggleHelp() {
    if (!help.hidden) { help.hidden = true; return; }
    help.textContent = ""; help.appendChild(el("h2", { text: "Keys" }));
    help.appendChild(facts2(KEYS)); help.appendChild(el("p", { class: "muted", text: "Links: #entry=ID&tab=context, #a=ID&b=ID&tab=compare, pi's ?leafId=\u2026&targetId=\u2026" }));
    help.hidden = false;
  }
  doc.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var t = ev.target; if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) return;
    var k = ev.key, done = true;
    if (k === "j" || k === "ArrowDown") move(1); else if (k === "k" || k === "ArrowUp") move(-1);
    else if (k === "h" || k === "ArrowLeft") { if (D.parent[state.sel] >= 0) go({ sel: D.parent[state.sel] }); }
    else if (k === "l" || k === "ArrowRight") { if (kids[state.sel]) go({ sel: kids[state.sel][kids[state.sel].length - 1] }); }
    else if (k === "g" || k === "Home") move(-1e9); else if (k === "G" || k === "End") move(1e9);
    else if (k === "L") { if (M.leaf !== null) go({ sel: M.leaf }); }
    else if (k === "[") branchPoint(-1); else if (k === "]") branchPoint(1);
    else if (k === "/") searchInput.focus();
    else if (k === "n") nextHit(1); else if (k === "N") nextHit(-1);
    else if (k === "e") go({ tab: "entry" }); else if (k === "p") go({ tab: "path" }); else if (k === "c") go({ tab: "context" });
    else if (k === "t") go({ tab: "trace" }); else if (k === "d") go({ tab: "compare" }); else if (k === "b") go({ b: state.sel });
    else if (k === "?") toggleHelp(); else if (k === "Escape") { help.hidden = true; setDrawer(false); }
    else done = false;
    if (done) ev.preventDefault();
  });
  // resizing the tree
  resizer.addEventListener("mousedown", function (ev) {
    ev.preventDefault();
    function moveTo(e) { mainBox.style.setProperty("--tree-w", Math.max(180, Math.min(innerWidth - 240, e.clientX)) + "px"); drawTree(); }
    function up() { removeEventListener("mousemove", moveTo); removeEventListener("mouseup", up); }
    addEventListener("mousemove", moveTo); addEventListener("mouseup", up);
  });
  addEventListener("resize", function () { drawTree(); });
  // printing prints the selected node's context, whatever tab is shown
  function forPrint() {
    if (state.sel >= 0 && (state.tab !== "context" || panes.context.querySelector("[data-more]"))) { panes.context.textContent = ""; drawContext(panes.context, state.sel, null, true); if (state.q) highlight(panes.context, state.q); }
  }
  addEventListener("beforeprint", forPrint);
  var printing = matchMedia("print");
  if (printing.addEventListener) printing.addEventListener("change", function (ev) { if (ev.matches) forPrint(); });

  window.pisessPage = Object.freeze({ sourceOf: function (node) { return node && sources.has(node) ? sources.get(node) : null; } });

  var start = readLocation();
  if (start.sel !== undefined) state.sel = start.sel;
  if (start.b !== undefined) state.b = start.b;
  if (start.tab) state.tab = start.tab; else if (!location.hash) state.tab = "context";
  render(); scrollToSel(); drawTree();
  // ready (the DOM contract's signal) once what is shown is drawn whole: a deep link to a node whose
  // messages come late in the file, or a search in the URL, waits for the browser to read them
  requestAnimationFrame(function drawn() { if (missing.size || retry || searchWaits) requestAnimationFrame(drawn); else root.dataset.ready = "1"; });
})();
