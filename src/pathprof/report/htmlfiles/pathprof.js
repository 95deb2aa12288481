// pathprof HTML report: sortable indexes (a file's rows grouped under it), and path
// selection on function pages. No network, no libraries: the report opens from disk.
(function () {
  "use strict";

  // Without this script every row shows; with it, a file's functions show when the
  // file is opened.
  document.documentElement.classList.add("js");

  // A table's body rows sort by the column clicked. In a grouped table each tbody
  // is a file: its first row (the file's) sorts among the files, and the rest (its
  // functions) within it.
  function sortable(table) {
    const heads = table.querySelectorAll("thead th");
    const grouped = table.classList.contains("grouped");
    heads.forEach(function (th, column) {
      th.addEventListener("click", function () {
        const numeric = th.dataset.type === "num";
        const ascending = !th.classList.contains("sorted-asc");
        heads.forEach(function (h) { h.classList.remove("sorted-asc", "sorted-desc"); });
        th.classList.add(ascending ? "sorted-asc" : "sorted-desc");
        function order(a, b) {
          const x = a.cells[column].dataset.sort, y = b.cells[column].dataset.sort;
          const result = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
          return ascending ? result : -result;
        }
        function sortRows(body, skip) {
          const rows = Array.from(body.rows).slice(skip);
          rows.sort(order);
          rows.forEach(function (row) { body.appendChild(row); });
        }
        if (!grouped) { sortRows(table.tBodies[0], 0); return; }
        const groups = Array.from(table.tBodies);
        groups.sort(function (a, b) { return order(a.rows[0], b.rows[0]); });
        groups.forEach(function (body) {
          sortRows(body, 1);
          table.insertBefore(body, table.tFoot);
        });
      });
    });
  }

  function openGroup(body, open) {
    body.classList.toggle("open", open);
    const button = body.querySelector("button.toggle");
    if (button) { button.setAttribute("aria-expanded", open ? "true" : "false"); }
  }

  function groups(table) {
    Array.from(table.tBodies).forEach(function (body) {
      const button = body.querySelector("button.toggle");
      if (button) {
        button.addEventListener("click", function () {
          openGroup(body, !body.classList.contains("open"));
        });
      }
    });
    [["open-all", true], ["close-all", false]].forEach(function (pair) {
      const button = document.getElementById(pair[0]);
      if (button) {
        button.addEventListener("click", function () {
          Array.from(table.tBodies).forEach(function (body) { openGroup(body, pair[1]); });
        });
      }
    });
  }

  // Keeps the rows whose name matches; in a grouped table, a file whose name matches
  // with all its functions, and the files with a matching function, shown open on
  // just those functions.
  function filter(input, table) {
    const grouped = table.classList.contains("grouped");
    function matches(row, needle) {
      return row.cells[0].textContent.toLowerCase().includes(needle);
    }
    input.addEventListener("input", function () {
      const needle = input.value.toLowerCase();
      Array.from(table.tBodies).forEach(function (body) {
        const rows = Array.from(body.rows);
        if (!grouped) {
          rows.forEach(function (row) { row.hidden = needle !== "" && !matches(row, needle); });
          return;
        }
        const fileMatches = needle === "" || matches(rows[0], needle);
        let found = false;
        rows.slice(1).forEach(function (row) {
          const shown = fileMatches || matches(row, needle);
          row.hidden = !shown;
          found = found || (!fileMatches && shown);
        });
        body.hidden = !fileMatches && !found;
        body.classList.toggle("found", found);
      });
    });
  }

  function pathPage(data) {
    const items = Array.from(document.querySelectorAll("li.path"));  // page order
    const byIndex = {};
    items.forEach(function (li) { byIndex[li.dataset.index] = li; });
    let current = -1;  // position in items of the selected path

    function clear() {
      document.querySelectorAll(".on").forEach(function (el) { el.classList.remove("on"); });
      document.querySelectorAll("td.taken").forEach(function (td) { td.textContent = ""; });
      items.forEach(function (li) { li.classList.remove("selected"); });
    }

    function select(index) {
      if (index < 0 || index >= data.paths.length) { return; }
      clear();
      const path = data.paths[index];
      document.body.classList.toggle("show-missed", path.missed);
      document.body.classList.toggle("show-next", path.kind === "next");
      path.lines.forEach(function (line) {
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
      const item = byIndex[String(index)];
      if (item) {
        item.classList.add("selected");
        current = items.indexOf(item);
      }
      if (location.hash !== "#path-" + index) {
        try {
          history.replaceState(null, "", "#path-" + index);
        } catch (error) {
          // some browsers refuse to change the address of a page opened from disk
        }
      }
    }

    function step(by) {
      const item = items[Math.max(0, Math.min(current + by, items.length - 1))];
      if (item) { select(parseInt(item.dataset.index, 10)); }
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
      if (event.key === "j") { step(1); }
      if (event.key === "k") { step(-1); }
    });
    const match = /^#path-(\d+)$/.exec(location.hash);
    select(match ? parseInt(match[1], 10) : 0);
  }

  document.querySelectorAll("table.sortable").forEach(sortable);
  const table = document.getElementById("functions");
  const input = document.getElementById("filter");
  if (table && table.classList.contains("grouped")) { groups(table); }
  if (table && input) { filter(input, table); }
  const script = document.getElementById("pathprof-data");
  if (script) { pathPage(JSON.parse(script.textContent)); }
}());
