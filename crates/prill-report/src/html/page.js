// The HTML run report's script: draws the table of cases, the failures and the judges'
// verdicts from the JSON in #prill-data. Every text goes in through textContent, never
// as markup. Rows are drawn a page at a time, so 10,000 cases stay quick.
"use strict";
(function () {
  const PAGE = 200;
  const data = JSON.parse(document.getElementById("prill-data").textContent);
  const units = data.units;
  units.forEach((u, i) => { u.i = i; u.haystack = [u.name, u.file, u.case_id, u.target, u.connection, u.dialect, u.verdict, ...u.tags, ...u.changes].join(" ").toLowerCase(); });
  const rank = { errored: 0, failed: 1, inconclusive: 2, passed: 3, unscored: 4, skipped: 5 };

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v; else node.setAttribute(k, v === true ? "" : v);
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }
  const secs = (s) => s === null || s === undefined ? "" : s < 0.001 ? "<1 ms" : s < 1 ? Math.round(s * 1000) + " ms" : s.toFixed(2) + " s";
  const usd = (c) => c === null || c === undefined ? "" : "$" + (c < 0.01 ? c.toPrecision(2) : c.toFixed(2));
  const show = (v) => typeof v === "string" ? v : JSON.stringify(v, null, 2);
  const tag = (status) => el("span", { class: "tag " + status }, status);
  // A case's name; on a page of `prill view`, a link to the case's history.
  const caseName = (u) => data.case_href ? el("a", { href: data.case_href + encodeURIComponent(u.case_id) }, u.name) : u.name;

  // The filters' choices, from the data.
  function choices(id, key) {
    const select = document.getElementById(id);
    [...new Set(units.map((u) => u[key]))].sort().forEach((v) => select.append(el("option", { value: v }, v)));
    select.addEventListener("change", redraw);
  }
  choices("status", "verdict");
  choices("dialect", "dialect");
  choices("connection", "connection");
  {
    // Tags: a unit has several, and the menu is hidden when no unit has one.
    const select = document.getElementById("tag");
    const all = [...new Set(units.flatMap((u) => u.tags))].sort();
    all.forEach((v) => select.append(el("option", { value: v }, v)));
    if (all.length === 0) select.hidden = true;
    select.addEventListener("change", redraw);
  }

  // The table: filtered, sorted, drawn a page at a time.
  const tbody = document.querySelector("#cases tbody");
  const filter = document.getElementById("filter");
  const more = document.getElementById("more-cases");
  let sortKey = "verdict", sortDir = 1, shown = [], drawn = 0;
  filter.addEventListener("input", redraw);
  more.addEventListener("click", () => drawRows(drawn + PAGE));
  document.querySelectorAll("#cases th").forEach((th) => th.addEventListener("click", () => {
    const key = th.dataset.key;
    sortDir = key === sortKey ? -sortDir : 1;
    sortKey = key;
    redraw();
  }));

  function compare(a, b) {
    let x = a[sortKey], y = b[sortKey];
    if (sortKey === "verdict") { x = rank[x]; y = rank[y]; }
    if (x === y) return a.i - b.i;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    return (x < y ? -1 : 1) * sortDir;
  }

  function redraw() {
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    const status = document.getElementById("status").value;
    const dialect = document.getElementById("dialect").value;
    const connection = document.getElementById("connection").value;
    const tagged = document.getElementById("tag").value;
    shown = units.filter((u) => (!status || u.verdict === status) && (!dialect || u.dialect === dialect) &&
      (!connection || u.connection === connection) && (!tagged || u.tags.includes(tagged)) && words.every((w) => u.haystack.includes(w)));
    shown.sort(compare);
    document.querySelectorAll("#cases th").forEach((th) => {
      if (th.dataset.key === sortKey) th.setAttribute("aria-sort", sortDir > 0 ? "ascending" : "descending");
      else th.removeAttribute("aria-sort");
    });
    tbody.replaceChildren();
    drawn = 0;
    drawRows(PAGE);
  }

  function drawRows(upTo) {
    const rows = [];
    for (; drawn < Math.min(upTo, shown.length); drawn++) rows.push(row(shown[drawn]));
    tbody.append(...rows);
    more.hidden = drawn >= shown.length;
    document.getElementById("count").textContent =
      (shown.length === units.length ? units.length + " cases" : shown.length + " of " + units.length + " cases") +
      (drawn < shown.length ? ", " + drawn + " shown" : "");
  }

  function row(u) {
    const tr = el("tr", { class: "unit " + u.verdict + (u.failure ? " openable" : ""), "data-case": u.case_id },
      el("td", {}, tag(u.verdict), u.changes.flatMap((c) => [" ", tag(c)])),
      el("td", {}, caseName(u), el("div", { class: "file" }, u.file)),
      el("td", {}, u.dialect),
      el("td", {}, u.connection, el("div", { class: "id" }, u.target)),
      el("td", {}, samples(u), rates(u)),
      el("td", { class: "num" }, secs(u.duration)),
      el("td", { class: "num" }, secs(u.latency)),
      el("td", { class: "num" }, u.tokens === null ? "" : u.tokens.toLocaleString("en")),
      el("td", { class: "num" }, usd(u.cost)));
    if (u.failure) {
      tr.title = "Click for what failed and the conversation";
      tr.addEventListener("click", (event) => {
        if (event.target.closest("a")) return;
        const next = tr.nextElementSibling;
        if (next && next.classList.contains("inline-detail")) { next.remove(); return; }
        tr.after(el("tr", { class: "inline-detail" }, el("td", { colspan: 9 }, detail(u))));
      });
    }
    return tr;
  }

  // "0 of 1 passed (needs 1 of 1)": how the samples went, then what the case needs.
  function samples(u) {
    const [need, of] = u.ratio.split("/");
    const ran = u.tally.passed + u.tally.failed + u.tally.errored;
    return u.tally.passed + " of " + ran + " passed (needs " + need + " of " + of + ")";
  }

  // "80.0% (95%: 49.0–94.3%) · pass^3 0.47" under the samples of a unit of more than
  // one; the exact interval and the pass@k and pass^k curves in its title.
  function rates(u) {
    const r = u.rates;
    if (!r) return [];
    const pct = (x) => (100 * x).toFixed(1) + "%";
    const range = (i) => pct(i.low) + "–" + pct(i.high);
    const at = r.pass_k[Math.min(2, r.pass_k.length - 1)];
    const curve = r.pass_k.map((p) => "k = " + p.k + ": pass@k " + p.pass_at_k.toFixed(3) + ", pass^k " + p.pass_hat_k.toFixed(3));
    const title = ["pass rate " + pct(r.rate), "Wilson 95%: " + range(r.wilson), "Clopper–Pearson 95%: " + range(r.clopper_pearson)].concat(curve).join("\n");
    return el("div", { class: "rates", title: title },
      pct(r.rate) + " (95%: " + range(r.wilson) + ") · pass^" + at.k + " " + at.pass_hat_k.toFixed(2));
  }

  // Why a unit did not pass, in one place: its first failing check (where it is, what
  // it expected and found), else the error of its sample or of its first turn.
  function reason(u) {
    const f = u.failure;
    const check = f.checks[0];
    if (check) return { message: check.message, at: check.at || check.path, expected: check.expected, found: check.found };
    const error = f.error || (f.turns.find((t) => t.error) || {}).error;
    return error ? { message: "error (" + error.kind + "): " + error.message } : { message: "" };
  }

  // What failed in a unit, and the failing sample's conversation, interaction by
  // interaction (numbered from 0, as the terminal numbers them).
  function detail(u) {
    const f = u.failure;
    const box = el("div", { class: "detail" });
    for (const c of f.checks) {
      box.append(el("div", { class: "check " + c.status },
        el("div", {}, tag(c.status), " ", el("strong", {}, c.name), " on ", c.target, " · interaction " + c.interaction),
        el("div", { class: "at" }, c.at || c.path),
        el("div", { class: "kv" },
          c.expected !== null && c.expected !== undefined ? [el("span", {}, "expected"), el("pre", {}, show(c.expected))] : [],
          c.found !== null && c.found !== undefined ? [el("span", {}, "found"), el("pre", {}, show(c.found))] : [],
          el("span", {}, "message"), el("pre", {}, c.message))));
    }
    if (f.error) box.append(el("p", { class: "check errored" }, "error (" + f.error.kind + "): " + f.error.message));
    box.append(el("h3", {}, "Transcript of sample " + f.sample + " (" + f.status + ")"));
    for (const t of f.turns) box.append(turn(t));
    return box;
  }

  function turn(t) {
    const part = (role, value, cls) => value === null || value === undefined ? [] :
      [el("div", { class: "role" }, role), el("pre", { class: cls || "" }, show(value))];
    const failing = t.checks.filter((c) => c.status === "failed" || c.status === "errored").map((c) => c.name || c.path);
    return el("div", { class: "turn" },
      el("h4", {}, "Interaction " + t.index + " · " + secs(t.duration) +
        (t.usage ? " · " + ((t.usage.input || 0) + (t.usage.output || 0)) + " tokens" : "") +
        " · " + t.checks.length + (t.checks.length === 1 ? " check" : " checks") +
        (failing.length ? ", not passed: " + failing.join(", ") : "")),
      part("sent", t.sent), part("sent sly_data", t.sent_sly_data),
      part(t.cached ? "answer (from the model response cache)" : "answer", t.answer),
      part("structure", t.structure), part("sly_data", t.sly_data),
      (t.trajectory || []).length ? part("tool calls", t.trajectory.map((c) => ({ turn: c.turn, tool: c.tool, arguments: c.arguments, result: c.result, is_error: c.is_error || undefined }))) : [],
      t.error ? part("error (" + t.error.kind + ")", t.error.message, "error") : []);
  }

  // The failures: one expandable entry per unit that did not pass.
  const failed = units.filter((u) => u.failure).sort((a, b) => rank[a.verdict] - rank[b.verdict] || a.i - b.i);
  const failures = document.getElementById("failures");
  const moreFailures = document.getElementById("more-failures");
  let failuresDrawn = 0;
  function drawFailures(upTo) {
    for (; failuresDrawn < Math.min(upTo, failed.length); failuresDrawn++) {
      const u = failed[failuresDrawn];
      const why = reason(u);
      const cut = (v) => { const text = show(v); return text.length > 300 ? text.slice(0, 300) + "…" : text; };
      const box = el("details", { class: "failure", "data-case": u.case_id },
        el("summary", {}, tag(u.verdict), " ", el("strong", {}, caseName(u)), " [" + u.connection + "] ",
          el("span", { class: "file" }, u.file),
          el("div", { class: "reason" },
            el("div", { class: "message" }, why.message),
            why.at ? el("div", { class: "at" }, "at " + why.at) : [],
            why.expected !== null && why.expected !== undefined ? el("div", {}, el("span", { class: "label" }, "expected "), el("code", {}, cut(why.expected))) : [],
            why.found !== null && why.found !== undefined ? el("div", {}, el("span", { class: "label" }, "found "), el("code", {}, cut(why.found))) : [])));
      box.addEventListener("toggle", () => { if (box.open && box.childElementCount === 1) box.append(detail(u)); });
      failures.append(box);
    }
    moreFailures.hidden = failuresDrawn >= failed.length;
  }
  moreFailures.addEventListener("click", () => drawFailures(failuresDrawn + PAGE));
  if (failed.length) drawFailures(PAGE); else failures.append(el("p", {}, "Every case passed."));

  // The judges' verdicts, with their reasons.
  const judges = document.getElementById("judges");
  const judged = units.filter((u) => u.judges.length);
  if (!judged.length) judges.append(el("p", {}, "No judge ran in this run."));
  for (const u of judged.slice(0, PAGE)) {
    judges.append(el("div", { class: "judge" }, el("strong", {}, u.name), " [" + u.connection + "]",
      u.judges.map((j) => el("div", {}, tag(j.status), " " + j.check + " · sample " + j.sample + ": ",
        el("span", { class: "reason" }, j.reason || "no reason given")))));
  }
  if (judged.length > PAGE) judges.append(el("p", {}, (judged.length - PAGE) + " more judged cases are in the table."));

  redraw();
  document.body.dataset.interactive = String(Math.round(performance.now()));
})();
