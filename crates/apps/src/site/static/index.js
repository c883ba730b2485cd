// xstack's bench site: the trial table. Filters, search, sort and page live in the URL's
// fragment (#verdict=fail&q=torch&direction=JAX%20%E2%86%92%20PyTorch&sort=duration&desc=1&page=2),
// so a link reproduces the view.
"use strict";
(function () {
  const trials = window.XSTACK_TRIALS || [];
  const PAGE = 100;
  const table = document.getElementById("trials");
  const body = table.querySelector("tbody");
  const keys = Array.from(table.querySelectorAll("th")).map((th) => th.dataset.key);
  // The direction filter is there only when the bench goes other than PyTorch to JAX.
  const controls = ["q", "task", "agent", "verdict", "class", "direction"]
    .map((id) => document.getElementById(id))
    .filter((c) => c);

  function fill(select, values) {
    for (const v of values) {
      const option = document.createElement("option");
      option.value = v;
      option.textContent = v;
      select.appendChild(option);
    }
  }
  const distinct = (key) => Array.from(new Set(trials.map((t) => t[key]).filter((v) => v))).sort();
  fill(document.getElementById("task"), distinct("task"));
  fill(document.getElementById("agent"), distinct("agent"));
  fill(document.getElementById("class"), distinct("class"));
  if (document.getElementById("direction")) fill(document.getElementById("direction"), distinct("direction"));

  function readState() {
    const params = new URLSearchParams(location.hash.slice(1));
    return {
      q: params.get("q") || "",
      task: params.get("task") || "",
      agent: params.get("agent") || "",
      verdict: params.get("verdict") || "",
      class: params.get("class") || "",
      direction: params.get("direction") || "",
      sort: params.get("sort") || "",
      desc: params.get("desc") === "1",
      page: Math.max(1, parseInt(params.get("page") || "1", 10) || 1),
    };
  }

  function writeState(state) {
    const params = new URLSearchParams();
    for (const key of ["q", "task", "agent", "verdict", "class", "direction", "sort"]) {
      if (state[key]) params.set(key, state[key]);
    }
    if (state.desc) params.set("desc", "1");
    if (state.page > 1) params.set("page", String(state.page));
    const hash = params.toString();
    history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
    render(state);
  }

  function matches(t, state) {
    if (state.task && t.task !== state.task) return false;
    if (state.agent && t.agent !== state.agent) return false;
    if (state.verdict && t.verdict !== state.verdict) return false;
    if (state.class && t.class !== state.class) return false;
    if (state.direction && t.direction !== state.direction) return false;
    if (state.q) {
      const q = state.q.toLowerCase();
      const hay = [t.task, t.agent, t.text, t.p1, t.p2, t.search].join("\n").toLowerCase();
      if (!hay.includes(q)) return false;
    }
    return true;
  }

  function compare(a, b) {
    if (a === b) return 0;
    if (a === null || a === undefined || a === "") return 1;
    if (b === null || b === undefined || b === "") return -1;
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b));
  }

  function cellText(t, key) {
    const v = t[key];
    if (v === null || v === undefined || v === "") return "–";
    if (v === true) return "yes";
    if (v === false) return "no";
    if (key === "cost") return v.toFixed(4);
    return String(v);
  }

  function render(state) {
    controls.forEach((c) => { c.value = state[c.id]; });
    let rows = trials.filter((t) => matches(t, state));
    if (state.sort) {
      rows = rows.slice().sort((a, b) => compare(a[state.sort], b[state.sort]));
      if (state.desc) rows.reverse();
    }
    const pages = Math.max(1, Math.ceil(rows.length / PAGE));
    const page = Math.min(state.page, pages);
    const shown = rows.slice((page - 1) * PAGE, page * PAGE);
    body.textContent = "";
    for (const t of shown) {
      const tr = document.createElement("tr");
      tr.dataset.trial = t.id;
      for (const key of keys) {
        const td = document.createElement("td");
        td.dataset.key = key;
        if (key === "task" || key === "text") {
          // The verdict links to the trial too: "why did it fail" is one click from the table.
          const a = document.createElement("a");
          a.href = t.href;
          a.textContent = t[key];
          td.appendChild(a);
        } else {
          td.textContent = cellText(t, key);
        }
        if (key === "text") td.className = t.verdict === "pass" ? "pass" : "fail";
        tr.appendChild(td);
      }
      body.appendChild(tr);
    }
    for (const th of table.querySelectorAll("th")) {
      th.classList.toggle("sorted", th.dataset.key === state.sort);
      th.classList.toggle("desc", th.dataset.key === state.sort && state.desc);
    }
    document.getElementById("count").textContent =
      rows.length + " of " + trials.length + " trials" + (pages > 1 ? ", page " + page + " of " + pages : "");
    const pager = document.getElementById("pager");
    pager.textContent = "";
    if (pages > 1) {
      for (const [label, target] of [["‹ previous", page - 1], ["next ›", page + 1]]) {
        const button = document.createElement("button");
        button.textContent = label;
        button.disabled = target < 1 || target > pages;
        button.addEventListener("click", () => writeState(Object.assign(readState(), { page: target })));
        pager.appendChild(button);
      }
    }
  }

  for (const c of controls) {
    c.addEventListener(c.tagName === "INPUT" ? "input" : "change", () => {
      const state = readState();
      state[c.id] = c.value;
      state.page = 1;
      writeState(state);
    });
  }
  for (const th of table.querySelectorAll("th")) {
    th.addEventListener("click", () => {
      const state = readState();
      if (state.sort === th.dataset.key) state.desc = !state.desc;
      else { state.sort = th.dataset.key; state.desc = false; }
      writeState(state);
    });
  }
  window.addEventListener("hashchange", () => render(readState()));
  render(readState());
})();
