// benchtrail project page: the series filter. Plain script, no build step.
//
// The series list is a plain table without this script (its filter box stays `hidden`). With
// it, the box is shown, and typing hides every series row (tr[data-search]) whose text (the
// configuration, the cell key, the metric's label and name, its SLO profile and statistics)
// lacks one of the typed words (case-insensitive); a cell or configuration left without a
// visible row is hidden too. #series-shown says how many rows are shown.
(function () {
  "use strict";
  var input = document.getElementById("series-filter");
  var box = document.getElementById("series-filter-box");
  var list = document.getElementById("series");
  if (!input || !box || !list) return;
  var rows = Array.prototype.slice.call(list.querySelectorAll("tr[data-search]"));
  var texts = rows.map(function (r) { return r.getAttribute("data-search").toLowerCase(); });
  var shown = document.getElementById("series-shown");

  function hideEmpty(selector) {
    list.querySelectorAll(selector).forEach(function (el) {
      el.hidden = !el.querySelector("tr[data-search]:not([hidden])");
    });
  }

  function apply() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var count = 0;
    rows.forEach(function (row, i) {
      var hit = words.every(function (w) { return texts[i].indexOf(w) >= 0; });
      row.hidden = !hit;
      if (hit) count += 1;
    });
    hideEmpty("div.cell");
    hideEmpty("section.config-group");
    if (shown) {
      shown.textContent = words.length ? count + " of " + rows.length + " rows" : rows.length + " rows";
    }
  }

  box.hidden = false;
  input.addEventListener("input", apply);
  apply();
})();
