/* tooltrap view: the filterable, sortable table of a run's episodes (or of a comparison's tasks).
   The rows come as JSON in <script type="application/json" id="table-data">; every cell is written
   with textContent, never as HTML. The filters and the sort live in the page's #fragment, so going
   back from an episode keeps them. */
(function () {
  "use strict";
  var spec = JSON.parse(document.getElementById("table-data").textContent);
  var app = document.getElementById("table-app");
  var cols = spec.columns;
  var rows = spec.rows;
  var PAGE = 1000;
  var MAX_OPTIONS = 300;
  var state = { filters: {}, q: "", sort: -1, dir: 1, limit: PAGE };
  var SAFE_HREF = /^[A-Za-z0-9._\/-]+\.html$/;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function readHash() {
    var found = false;
    var h = location.hash.replace(/^#/, "");
    if (!h) return false;
    h.split("&").forEach(function (part) {
      var kv = part.split("=");
      var k = decodeURIComponent(kv[0] || "");
      var v = decodeURIComponent(kv.slice(1).join("=") || "");
      if (k === "q") { state.q = v; found = true; }
      else if (k === "s") { state.sort = parseInt(v, 10); found = true; }
      else if (k === "d") { state.dir = v === "-1" ? -1 : 1; }
      else if (k.charAt(0) === "f") { state.filters[parseInt(k.slice(1), 10)] = v; found = true; }
    });
    return found;
  }

  function writeHash() {
    var parts = [];
    Object.keys(state.filters).forEach(function (i) {
      if (state.filters[i] !== "") parts.push("f" + i + "=" + encodeURIComponent(state.filters[i]));
    });
    if (state.q) parts.push("q=" + encodeURIComponent(state.q));
    if (state.sort >= 0) { parts.push("s=" + state.sort); parts.push("d=" + state.dir); }
    try { history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname); } catch (e) { /* file: pages may refuse */ }
  }

  if (!readHash()) {
    cols.forEach(function (c, i) { if (c["default"] !== undefined) state.filters[i] = c["default"]; });
  }

  function flagText(v) { return v === 1 ? "yes" : v === 0 ? "no" : "n/a"; }
  function cellKey(c, v) {
    if (c.kind === "flag") return v === null || v === undefined ? "na" : String(v);
    if (c.kind === "link") return v[0];
    return v === null || v === undefined ? "" : String(v);
  }

  // -- controls ------------------------------------------------------------------------------------
  var controls = el("div", "controls");
  var search = el("input");
  search.type = "search";
  search.placeholder = "task id contains…";
  search.setAttribute("aria-label", "search task ids");
  search.value = state.q;
  search.addEventListener("input", function () { state.q = search.value; state.limit = PAGE; render(); });
  controls.appendChild(search);

  cols.forEach(function (c, i) {
    if (c.filter !== "select") return;
    var box = el("label", "filter");
    box.appendChild(el("span", null, c.label));
    var select = el("select");
    select.setAttribute("data-col", c.label);
    select.setAttribute("aria-label", "filter " + c.label);
    var options = [["", "any"]];
    if (c.kind === "flag") {
      options.push(["1", "yes"], ["0", "no"], ["na", "n/a"]);
    } else {
      var seen = {};
      rows.forEach(function (r) { seen[cellKey(c, r[i])] = true; });
      var values = Object.keys(seen).sort();
      if (values.length > MAX_OPTIONS) return; // too many to choose from: the search box serves
      values.forEach(function (v) { options.push([v, v === "" ? "(none)" : v]); });
    }
    options.forEach(function (o) {
      var opt = el("option", null, o[1]);
      opt.value = o[0];
      select.appendChild(opt);
    });
    select.value = state.filters[i] !== undefined ? state.filters[i] : "";
    select.addEventListener("change", function () { state.filters[i] = select.value; state.limit = PAGE; render(); });
    box.appendChild(select);
    controls.appendChild(box);
  });

  var status = el("p", "status");
  status.setAttribute("role", "status");
  var table = el("table", "grid rows");
  var thead = el("thead");
  var headRow = el("tr");
  var heads = [];
  cols.forEach(function (c, i) {
    var th = el("th", c.kind === "num" ? "num" : null, c.label);
    if (c.sort || c.kind === "link") {
      th.className += " sortable";
      th.setAttribute("data-sort", c.label);
      th.setAttribute("role", "button");
      th.tabIndex = 0;
      var toggle = function () {
        if (state.sort === i) state.dir = -state.dir; else { state.sort = i; state.dir = c.kind === "num" ? -1 : 1; }
        render();
      };
      th.addEventListener("click", toggle);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") toggle(); });
    }
    heads.push(th);
    headRow.appendChild(th);
  });
  thead.appendChild(headRow);
  table.appendChild(thead);
  var tbody = el("tbody");
  table.appendChild(tbody);
  var more = el("button", "more", "show more");
  more.addEventListener("click", function () { state.limit += PAGE * 10; render(); });

  // -- filtering, sorting, drawing -------------------------------------------------------------------
  function matches(r) {
    if (state.q) {
      var q = state.q.toLowerCase();
      var name = r[0] && r[0][0] !== undefined ? r[0][0] : String(r[0]);
      if (String(name).toLowerCase().indexOf(q) < 0) return false;
    }
    for (var k in state.filters) {
      var want = state.filters[k];
      if (want === "" || want === undefined) continue;
      var i = parseInt(k, 10);
      if (!cols[i] || cellKey(cols[i], r[i]) !== want) return false;
    }
    return true;
  }

  function compare(a, b) {
    var i = state.sort;
    var x = rows[a][i], y = rows[b][i];
    if (cols[i].kind === "link") { x = x[0]; y = y[0]; }
    var xn = x === null || x === undefined, yn = y === null || y === undefined;
    if (xn || yn) return xn === yn ? a - b : (xn ? 1 : -1); // missing values last, either way
    if (x < y) return -state.dir;
    if (x > y) return state.dir;
    return a - b;
  }

  function drawCell(c, v) {
    var td = el("td");
    if (c.kind === "link") {
      var a = el("a", null, v[0]);
      if (SAFE_HREF.test(v[1])) a.href = v[1];
      td.appendChild(a);
    } else if (c.kind === "flag") {
      td.textContent = flagText(v);
      var bad = v !== null && v !== undefined && c.good !== null && c.good !== undefined && (v === 1) !== c.good;
      td.className = v === null || v === undefined ? "flag na" : bad ? "flag bad" : c.good === null || c.good === undefined ? "flag" : "flag good";
    } else if (c.kind === "num") {
      td.textContent = v === null || v === undefined ? "-" : Number(v).toFixed(3);
      td.className = "num";
    } else {
      td.textContent = v === null || v === undefined ? "" : String(v);
      if (c.wrap) td.className = "wrap";
    }
    return td;
  }

  function render() {
    var shown = [];
    for (var i = 0; i < rows.length; i++) if (matches(rows[i])) shown.push(i);
    if (state.sort >= 0 && cols[state.sort]) shown.sort(compare);
    heads.forEach(function (th, j) {
      th.removeAttribute("aria-sort");
      if (j === state.sort) th.setAttribute("aria-sort", state.dir > 0 ? "ascending" : "descending");
    });
    var body = el("tbody");
    var n = Math.min(shown.length, state.limit);
    for (var s = 0; s < n; s++) {
      var r = rows[shown[s]];
      var tr = el("tr");
      for (var c = 0; c < cols.length; c++) tr.appendChild(drawCell(cols[c], r[c]));
      body.appendChild(tr);
    }
    table.replaceChild(body, tbody);
    tbody = body;
    status.textContent = "showing " + n + " of " + shown.length + " matching (" + rows.length + " in all)";
    more.hidden = n >= shown.length;
    writeHash();
    document.body.setAttribute("data-ready", "1");
  }

  while (app.firstChild) app.removeChild(app.firstChild);
  app.appendChild(controls);
  app.appendChild(status);
  app.appendChild(table);
  app.appendChild(more);
  render();
})();
