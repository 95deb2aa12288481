// pathprof HTML report: sortable indexes, and path selection on function pages.
// No network, no libraries: the report opens from disk.
(function () {
  "use strict";

  function sortable(table) {
    const heads = table.querySelectorAll("th");
    heads.forEach(function (th, column) {
      th.addEventListener("click", function () {
        const numeric = th.dataset.type === "num";
        const ascending = !th.classList.contains("sorted-asc");
        heads.forEach(function (h) { h.classList.remove("sorted-asc", "sorted-desc"); });
        th.classList.add(ascending ? "sorted-asc" : "sorted-desc");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        rows.sort(function (a, b) {
          const x = a.cells[column].dataset.sort, y = b.cells[column].dataset.sort;
          const order = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  }

  function filter(input, table) {
    input.addEventListener("input", function () {
      const needle = input.value.toLowerCase();
      Array.from(table.tBodies[0].rows).forEach(function (row) {
        row.hidden = needle !== "" && !row.textContent.toLowerCase().includes(needle);
      });
    });
  }

  function pathPage(data) {
    const items = Array.from(document.querySelectorAll("li.path"));
    let current = -1;

    function clear() {
      document.querySelectorAll(".on").forEach(function (el) { el.classList.remove("on"); });
      document.querySelectorAll("td.taken").forEach(function (td) { td.textContent = ""; });
      items.forEach(function (li) { li.classList.remove("selected"); });
    }

    function select(index) {
      if (index < 0 || index >= data.paths.length) { return; }
      clear();
      current = index;
      const path = data.paths[index];
      document.body.classList.toggle("show-missed", path.missed);
      path.lines.forEach(function (line, step) {
        const row = document.getElementById("line-" + line);
        if (!row) { return; }
        row.classList.add("on");
        const taken = path.decisions[String(line)];
        const cell = row.querySelector("td.taken");
        if (cell && taken !== undefined) { cell.textContent = "→ " + taken; }
      });
      path.blocks.forEach(function (block) {
        const node = document.getElementById("node-" + block);
        if (node) { node.classList.add("on"); }
      });
      path.edges.forEach(function (edge) {
        const el = document.getElementById("edge-" + edge);
        if (el) { el.classList.add("on"); }
      });
      const item = items[index];
      if (item) { item.classList.add("selected"); }
      if (location.hash !== "#path-" + index) {
        history.replaceState(null, "", "#path-" + index);
      }
    }

    items.forEach(function (li) {
      const index = parseInt(li.dataset.index, 10);
      li.addEventListener("click", function () { select(index); });
      li.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { select(index); event.preventDefault(); }
      });
    });
    document.addEventListener("keydown", function (event) {
      if (event.target.tagName === "INPUT") { return; }
      if (event.key === "j") { select(Math.min(current + 1, data.paths.length - 1)); }
      if (event.key === "k") { select(Math.max(current - 1, 0)); }
    });
    const match = /^#path-(\d+)$/.exec(location.hash);
    select(match ? parseInt(match[1], 10) : 0);
  }

  document.querySelectorAll("table.sortable").forEach(sortable);
  const table = document.getElementById("functions");
  const input = document.getElementById("filter");
  if (table && input) { filter(input, table); }
  const script = document.getElementById("pathprof-data");
  if (script) { pathPage(JSON.parse(script.textContent)); }
}());
