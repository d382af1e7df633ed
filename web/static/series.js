// benchtrail series explorer: draws one series across commits with uPlot (vendored, global
// `uPlot`). Plain script, no build step; the column arrays come from series_columns.js, the
// view state in the URL and the baseline band's numbers from series_view.js.
//
// Reads the JSON API named in #chart[data-api] ({series, branch, points: [{commit_sha,
// commit_time, commit_subject, run_id, repeat_index, value, n, ...}]}) and draws every point,
// a thin line through each commit's mean, and under them the baseline band: mean ± 1σ of the
// per-commit means of the #chart[data-window] earlier commits (the project's baseline window).
// A legend below the chart names points, mean line, whiskers, band and overlay.
//
// Controls above the chart (built here, so the page without JavaScript keeps only the
// table): x axis by commit order or commit date (a time axis), log scale, reset zoom (a drag
// across the plot zooms into that x range), and an overlay select listing the same metric
// and statistic in the project's other cells (GET /api/v1/projects/{p}/series?metric&stat);
// the chosen series is drawn in orange with its own mean line. The whole view is in the
// query string (x=time, log=1, from/to, overlay=<series id>): read on load, rewritten with
// history.replaceState on every change, a zoom included.
//
// On a branch other than the project's default one (#chart[data-default-branch]), the default
// branch's points of the same series are the overlay unless the URL names another
// (overlay=@<branch> is "this series on that branch", overlay=none draws none), and the
// branch's merge base (#chart[data-merge-base]) is marked with a dotted vertical line at its
// commit on the default branch, so a PR's single point is seen against main's history.
//
// Hovering shows a tooltip for the nearest point (by x, then by y among repeats; main or
// overlay, whichever is nearer): commit, subject, commit date, value with unit, n, change
// against the baseline in percent, interval, alerts. A mouse click opens that point's run; on
// touch the first tap shows the tooltip and a second tap on the same point opens the run.
//
// Confidence intervals of the points (p50/p99 series) come from the server's points table
// (#points tr[data-ci-low][data-ci-high], same order as the API's points): each is drawn as a
// teal whisker through its point and named in the tooltip.
//
// Alerts of the series on this branch are listed by the server in #series-alerts (one
// li[data-x][data-commit-sha][data-kind][data-summary] each); they are marked on the chart at
// their commit: a vertical line and a glyph per alert (▼ regression red, ▲ improvement green,
// ◆ trade-off purple with a dashed line, ● others grey), and the tooltip of a commit lists
// its alerts' one-sentence summaries.
//
// For tests and scripts, the chart container gets data-state="ready", data-points=<count>,
// data-markers=<count> and data-series=<1 or 2> once drawn, and window.benchtrailChart holds
// the uPlot instance, the columns, the markers ({x, kind, summary, status, id}), the band
// ({xs, lo, mid, hi}), the view, the full x range, whether y is logarithmic and the overlay.
(function () {
  "use strict";

  var el = document.getElementById("chart");
  if (!el || typeof uPlot === "undefined") return;
  var statusEl = document.getElementById("chart-status");
  var unit = el.dataset.unit || "";
  var HEIGHT = 320;
  // Index of the points series in uPlot's data (0 is x, 1 the mean line).
  var POINTS = 2;

  function setStatus(state, text) {
    el.dataset.state = state;
    if (statusEl) statusEl.textContent = text;
  }

  // Same precision rule as the server's tables: whole numbers as is, then 2/3 decimals,
  // 4 significant digits below 1.
  function displayNumber(v) {
    if (!isFinite(v)) return String(v);
    if (Number.isInteger(v)) return String(v);
    var a = Math.abs(v);
    if (a >= 100) return v.toFixed(2);
    if (a >= 1) return v.toFixed(3);
    var decimals = Math.min(12, Math.max(1, 3 - Math.floor(Math.log10(a))));
    return v.toFixed(decimals);
  }

  // The points table's intervals, in API order (null where a point has none).
  function readIntervals(count) {
    var rows = document.querySelectorAll("#points tbody tr");
    var out = [];
    for (var i = 0; i < count; i++) {
      var d = rows[i] && rows[i].dataset;
      out.push(d && d.ciLow !== undefined ? { low: Number(d.ciLow), high: Number(d.ciHigh), text: d.ciText } : null);
    }
    return out;
  }

  // Among the points of series `s` sharing the hovered x (repeats of a commit), the one
  // nearest the cursor vertically; uPlot alone would always pick the same one of them.
  function nearestRepeat(u, c, s, idx) {
    if (idx == null) return idx;
    var top = u.cursor.top;
    if (top == null || top < 0) return idx;
    var ys = u.data[s];
    var yAtCursor = u.posToVal(top, "y");
    var x = c.xs[idx];
    var lo = idx, hi = idx;
    while (lo > 0 && c.xs[lo - 1] === x) lo--;
    while (hi < c.xs.length - 1 && c.xs[hi + 1] === x) hi++;
    var best = idx, bestDist = Infinity;
    for (var i = lo; i <= hi; i++) {
      if (ys[i] == null) continue;
      var d = Math.abs(ys[i] - yAtCursor);
      if (d < bestDist) { best = i; bestDist = d; }
    }
    return best;
  }

  var MARK = {
    regression: { color: "#b42318", glyph: "down" },
    improvement: { color: "#1a7f37", glyph: "up" },
    tradeoff: { color: "#8a3ffc", glyph: "diamond", dash: [5, 4] },
  };
  var MARK_OTHER = { color: "#5f6b7a", glyph: "dot" };
  var KIND_TEXT = { regression: "▼ regression", improvement: "▲ improvement", tradeoff: "◆ trade-off" };

  // The alerts the server listed, for commits that have a point here.
  function readMarkers() {
    var out = [];
    document.querySelectorAll("#series-alerts li[data-x]").forEach(function (li) {
      if (li.dataset.x === "") return;
      out.push({ x: Number(li.dataset.x), sha: li.dataset.commitSha, kind: li.dataset.kind, summary: li.dataset.summary || "",
        status: li.dataset.status, id: li.dataset.alertId });
    });
    return out;
  }

  // Where the glyph of marker k is drawn (canvas pixels): at the top of the plot, stacked
  // when a commit has several alerts.
  function glyphPos(u, markers, k) {
    var m = markers[k], stack = 0;
    for (var j = 0; j < k; j++) if (markers[j].x === m.x) stack++;
    var r = 7 * devicePixelRatio;
    return { x: Math.round(u.valToPos(m.x, "x", true)), y: Math.round(u.bbox.top + r + 2 + stack * (2 * r + 3)), r: r };
  }

  var CI_COLOR = "#2a9d8f";

  function drawIntervals(u, c) {
    var ctx = u.ctx, cap = 6 * devicePixelRatio;
    ctx.save();
    ctx.strokeStyle = CI_COLOR;
    ctx.lineWidth = 2 * devicePixelRatio;
    c.cis.forEach(function (ci, i) {
      if (!ci) return;
      var x = Math.round(u.valToPos(c.xs[i], "x", true));
      // Whole pixels: crisp lines, not anti-aliased smears.
      var lo = Math.round(u.valToPos(ci.low, "y", true)), hi = Math.round(u.valToPos(ci.high, "y", true));
      ctx.beginPath();
      ctx.moveTo(x, lo); ctx.lineTo(x, hi);
      ctx.moveTo(x - cap, lo); ctx.lineTo(x + cap, lo);
      ctx.moveTo(x - cap, hi); ctx.lineTo(x + cap, hi);
      ctx.stroke();
    });
    ctx.restore();
  }

  var MERGE_BASE_COLOR = "#3d4a5c";

  // The merge base's commit on the default branch: a dotted line across the plot, labelled.
  function drawMergeBase(u, mb) {
    if (!mb || mb.x == null) return;
    var ctx = u.ctx, dpr = devicePixelRatio;
    var x = Math.round(u.valToPos(mb.x, "x", true));
    ctx.save();
    ctx.strokeStyle = MERGE_BASE_COLOR;
    ctx.fillStyle = MERGE_BASE_COLOR;
    ctx.lineWidth = 1.5 * dpr;
    ctx.setLineDash([2 * dpr, 3 * dpr]);
    ctx.beginPath();
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.font = (11 * dpr) + "px sans-serif";
    // At the top, beside the line: the points sit lower, near the baseline's level.
    ctx.textBaseline = "top";
    ctx.fillText("merge base", x + 4 * dpr, u.bbox.top + 4 * dpr);
    ctx.restore();
  }

  function drawMarkers(u, markers) {
    var ctx = u.ctx;
    ctx.save();
    markers.forEach(function (m, k) {
      var style = MARK[m.kind] || MARK_OTHER;
      var g = glyphPos(u, markers, k);
      ctx.strokeStyle = style.color;
      ctx.fillStyle = style.color;
      ctx.lineWidth = 1.5 * devicePixelRatio;
      ctx.setLineDash((style.dash || []).map(function (d) { return d * devicePixelRatio; }));
      ctx.beginPath();
      ctx.moveTo(g.x, u.bbox.top);
      ctx.lineTo(g.x, u.bbox.top + u.bbox.height);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.beginPath();
      if (style.glyph === "down") {
        ctx.moveTo(g.x - g.r, g.y - g.r); ctx.lineTo(g.x + g.r, g.y - g.r); ctx.lineTo(g.x, g.y + g.r);
      } else if (style.glyph === "up") {
        ctx.moveTo(g.x - g.r, g.y + g.r); ctx.lineTo(g.x + g.r, g.y + g.r); ctx.lineTo(g.x, g.y - g.r);
      } else if (style.glyph === "diamond") {
        ctx.moveTo(g.x, g.y - g.r); ctx.lineTo(g.x + g.r, g.y); ctx.lineTo(g.x, g.y + g.r); ctx.lineTo(g.x - g.r, g.y);
      } else {
        ctx.arc(g.x, g.y, g.r * 0.8, 0, 2 * Math.PI);
      }
      ctx.closePath();
      ctx.fill();
    });
    ctx.restore();
  }

  // Value text of the tooltip: at most 6 significant digits, no trailing zeros.
  function formatValue(v) {
    return v == null ? "" : String(Number(v.toPrecision(6)));
  }

  function formatDate(iso) {
    var d = new Date(iso);
    if (isNaN(d)) return "";
    return d.toISOString().slice(0, 16).replace("T", " ") + " UTC";
  }

  var MAIN_COLOR = "#1f5fbf", MEAN_COLOR = "#9aa7b8", OVERLAY_COLOR = "#d9480f";
  var BAND_FILL = "rgba(31, 95, 191, 0.13)", BAND_LINE = "rgba(31, 95, 191, 0.55)";
  // Indices of the series in uPlot's data (0 is x).
  var MEAN = 1, OV_MEAN = 3, OV_POINTS = 4;

  // The baseline band under the points: one shaded polygon per run of consecutive commits
  // that have a baseline, with its mean dashed; a lone commit gets a short bar.
  function drawBand(u, c) {
    var b = c.band, ctx = u.ctx, dpr = devicePixelRatio;
    if (!b.xs.length) return;
    ctx.save();
    ctx.beginPath();
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    ctx.clip();
    var px = function (x) { return u.valToPos(x, "x", true); };
    var py = function (y) { return u.valToPos(y, "y", true); };
    // Runs of band commits adjacent in commit order.
    var runs = [], run = [];
    b.xs.forEach(function (_, k) {
      var idx = c.commits.findIndex(function (cm) { return cm.sha === b.shas[k]; });
      if (run.length && idx !== run[run.length - 1].idx + 1) { runs.push(run); run = []; }
      run.push({ k: k, idx: idx });
    });
    if (run.length) runs.push(run);
    runs.forEach(function (r) {
      var ks = r.map(function (e) { return e.k; });
      var half = ks.length === 1 ? 8 * dpr : 0;
      ctx.fillStyle = BAND_FILL;
      ctx.beginPath();
      ks.forEach(function (k, j) { var x = px(b.xs[k]) - (j === 0 ? half : 0); if (j === 0) ctx.moveTo(x, py(b.hi[k])); else ctx.lineTo(x, py(b.hi[k])); });
      if (half) ctx.lineTo(px(b.xs[ks[0]]) + half, py(b.hi[ks[0]]));
      if (half) ctx.lineTo(px(b.xs[ks[0]]) + half, py(b.lo[ks[0]]));
      ks.slice().reverse().forEach(function (k, j) { ctx.lineTo(px(b.xs[k]) - (half && j === ks.length - 1 ? half : 0), py(b.lo[k])); });
      ctx.closePath();
      ctx.fill();
      ctx.strokeStyle = BAND_LINE;
      ctx.lineWidth = 1 * dpr;
      ctx.setLineDash([4 * dpr, 3 * dpr]);
      ctx.beginPath();
      ks.forEach(function (k, j) { var x = px(b.xs[k]); if (j === 0) ctx.moveTo(x - half, py(b.mid[k])); else ctx.lineTo(x, py(b.mid[k])); });
      if (half) ctx.lineTo(px(b.xs[ks[0]]) + half, py(b.mid[ks[0]]));
      ctx.stroke();
    });
    ctx.restore();
  }

  // Everything y can take: values, intervals, band.
  function valueExtent(c) {
    var lo = Infinity, hi = -Infinity;
    function take(v) { if (v != null && isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } }
    c.ys.forEach(take); c.ovYs.forEach(take);
    c.cis.forEach(function (ci) { if (ci) { take(ci.low); take(ci.high); } });
    c.band.lo.forEach(take); c.band.hi.forEach(take);
    return { lo: lo, hi: hi };
  }

  // The x range showing every point: half a commit (or 2 % of the time span) on each side.
  function fullXRange(c) {
    var lo = Math.min.apply(null, c.xs), hi = Math.max.apply(null, c.xs);
    if (c.mode !== "time") return [lo - 0.5, hi + 0.5];
    var pad = (hi - lo) * 0.02 || 3600;
    return [lo - pad, hi + pad];
  }

  var view = window.benchtrailSeriesView.readView(window.location.search);
  // On a branch other than the default one, the default branch is the overlay unless the URL
  // says otherwise (view.overlay null: the default; "none": no overlay).
  var contextBranch = el.dataset.defaultBranch || null;
  var defaultOverlay = contextBranch ? "@" + contextBranch : null;
  function chosenOverlay() {
    if (view.overlay == null) return defaultOverlay;
    return view.overlay === "none" ? null : view.overlay;
  }
  var mainDoc = null, overlayDoc = null, u = null;
  var markerSource = readMarkers();
  var controls = document.getElementById("chart-controls");
  var legendEl = document.getElementById("chart-legend");
  var baselineWindow = Number(el.dataset.window) || 10;
  // The pointer of the last press on the plot, and the point a touch tapped last: a first
  // tap shows the tooltip, a second tap on the same point opens its run.
  var lastPointer = "mouse", tapped = null;

  function legendItem(key, swatch, color, text) {
    var span = document.createElement("span");
    span.className = "legend-item";
    span.dataset.series = key;
    var sw = document.createElement("span");
    sw.className = "swatch";
    sw.style.color = color;
    sw.textContent = swatch;
    span.appendChild(sw);
    span.appendChild(document.createTextNode(" " + text));
    legendEl.appendChild(span);
  }

  function drawLegend(c) {
    legendEl.textContent = "";
    legendItem("points", "●", MAIN_COLOR, (el.dataset.label || "value") + " (one dot per repeat)");
    legendItem("mean", "━", MEAN_COLOR, "mean per commit");
    if (c.cis.some(Boolean)) legendItem("whiskers", "┃", CI_COLOR, "confidence interval (whiskers)");
    if (c.band.xs.length) legendItem("band", "▇", BAND_LINE, "baseline: mean ± 1σ of the previous " + baselineWindow + " commits");
    if (overlayDoc) legendItem("overlay", "●", OVERLAY_COLOR, "overlay: " + overlayName());
    if (c.mergeBase && c.mergeBase.x != null) legendItem("merge-base", "┆", MERGE_BASE_COLOR, "merge base " + c.mergeBase.sha.slice(0, 10) + " on " + contextBranch);
    legendEl.hidden = false;
  }

  // What the overlay is, in words: "branch main" or "cell max_concurrency=4;…".
  function overlayName() {
    return overlayDoc.overlayBranch ? "branch " + overlayDoc.overlayBranch : "cell " + overlayDoc.series.cell_key;
  }

  function showTooltip(u, c, tooltip) {
    var cand = [POINTS, OV_POINTS].filter(function (s) { return u.cursor.idxs && u.cursor.idxs[s] != null && u.data[s] && u.data[s][u.cursor.idxs[s]] != null; });
    if (!cand.length || u.cursor.left == null || u.cursor.left < 0) {
      tooltip.hidden = true;
      tooltip.dataset.index = "";
      return null;
    }
    // The nearer of the main and the overlay point under the cursor.
    cand.sort(function (a, b) {
      return Math.abs(u.valToPos(u.data[a][u.cursor.idxs[a]], "y") - u.cursor.top) - Math.abs(u.valToPos(u.data[b][u.cursor.idxs[b]], "y") - u.cursor.top);
    });
    var s = cand[0], i = u.cursor.idxs[s];
    var v = u.data[s][i];
    tooltip.dataset.commitSha = c.shas[i];
    tooltip.dataset.value = String(v);
    tooltip.dataset.runId = c.runIds[i];
    tooltip.dataset.index = String(i);
    tooltip.dataset.series = s === POINTS ? "main" : "overlay";
    tooltip.textContent = "";
    function line(cls, text) {
      var d = document.createElement("div");
      if (cls) d.className = cls;
      if (text != null) d.textContent = text;
      tooltip.appendChild(d);
      return d;
    }
    var head = line("", null);
    var sha = document.createElement("code");
    sha.textContent = c.shas[i].slice(0, 10);
    head.appendChild(sha);
    if (c.repeats[i] !== 0) head.appendChild(document.createTextNode(" · repeat " + c.repeats[i]));
    if (s === OV_POINTS) head.appendChild(document.createTextNode(" · overlay " + overlayName()));
    if (c.mergeBase && c.mergeBase.sha === c.shas[i]) head.appendChild(document.createTextNode(" · merge base"));
    if (c.subjects[i]) line("subject", c.subjects[i]);
    if (c.commitTimes[i]) line("date", formatDate(c.commitTimes[i]));
    var val = line("", null);
    var strong = document.createElement("strong");
    strong.className = "value";
    strong.textContent = formatValue(v) + (unit ? " " + unit : "");
    val.appendChild(strong);
    if (c.ns[i] != null) val.appendChild(document.createTextNode(" · n=" + c.ns[i]));
    var base = s === POINTS ? c.baselineOf.get(c.shas[i]) : undefined;
    if (base != null && base !== 0) {
      var pct = (v - base) / Math.abs(base) * 100;
      var delta = line("delta", (pct >= 0 ? "+" : "") + pct.toFixed(1) + " % vs baseline " + formatValue(base) + (unit ? " " + unit : ""));
      delta.dataset.pct = pct.toFixed(1);
    }
    if (s === POINTS && c.cis[i]) line("ci-line", "interval " + c.cis[i].text);
    if (s === POINTS) c.markers.forEach(function (m) {
      if (m.x !== c.xs[i]) return;
      var al = line("alert-line", null);
      al.dataset.kind = m.kind;
      var kind = document.createElement("strong");
      kind.style.color = (MARK[m.kind] || MARK_OTHER).color;
      kind.textContent = (KIND_TEXT[m.kind] || "● " + m.kind.replace("_", " ")) + " (" + m.status + "): ";
      al.appendChild(kind);
      al.appendChild(document.createTextNode(m.summary));
    });
    tooltip.hidden = false;
    // Place next to the point, flipped left near the right edge.
    var px = u.valToPos(c.xs[i], "x");
    var py = u.valToPos(v, "y");
    var w = tooltip.offsetWidth;
    var left = px + 12;
    if (left + w > u.over.clientWidth) left = Math.max(0, px - 12 - w);
    tooltip.style.left = left + "px";
    tooltip.style.top = Math.max(0, py - tooltip.offsetHeight - 8) + "px";
    return i;
  }

  function chartWidth() { return Math.max(280, el.clientWidth || 800); }

  function draw() {
    if (u) { u.destroy(); u = null; }
    var points = mainDoc.points;
    var ovPoints = overlayDoc ? overlayDoc.points : null;
    var c = window.benchtrailSeriesColumns.columns(points, ovPoints, view.x, baselineWindow, readIntervals(points.length));
    c.markers = [];
    markerSource.forEach(function (m) {
      var x = m.sha ? c.xOfCommit(m.sha) : m.x;
      if (x != null) c.markers.push(Object.assign({}, m, { x: x }));
    });
    var markers = c.markers;
    // The merge base, when the overlay is the default branch that holds it.
    c.mergeBase = overlayDoc && overlayDoc.overlayBranch === contextBranch && el.dataset.mergeBase
      ? { sha: el.dataset.mergeBase, x: c.xOfCommit(el.dataset.mergeBase) } : null;
    var ext = valueExtent(c);
    // A log axis cannot show zero or negative values: then the toggle is off and disabled.
    var logOk = ext.lo > 0;
    var log = view.log && logOk;
    var logBox = document.getElementById("chart-log");
    if (logBox) { logBox.disabled = !logOk; logBox.checked = log; }
    var full = fullXRange(c);
    var tooltip = document.createElement("div");
    tooltip.className = "tooltip";
    tooltip.id = "chart-tooltip";
    tooltip.hidden = true;
    var hovered = null;
    var want = view.from != null ? { min: view.from, max: view.to } : null;
    // uPlot asks for the range of the data itself only when it auto-ranges.
    var dataMin = Math.min.apply(null, c.xs), dataMax = Math.max.apply(null, c.xs);

    var series = [
      {},
      { label: "mean per commit", stroke: MEAN_COLOR, width: 1.5, spanGaps: true, points: { show: false } },
      { label: el.dataset.label || "value", stroke: MAIN_COLOR, fill: MAIN_COLOR, width: 0,
        paths: function () { return null; }, points: { show: true, size: 8, stroke: MAIN_COLOR, fill: MAIN_COLOR } },
    ];
    var data = [c.xs, c.means, c.ys];
    if (overlayDoc) {
      series.push({ label: "overlay mean", stroke: OVERLAY_COLOR, width: 1.5, spanGaps: true, points: { show: false } });
      series.push({ label: "overlay", stroke: OVERLAY_COLOR, fill: OVERLAY_COLOR, width: 0,
        paths: function () { return null; }, points: { show: true, size: 7, stroke: OVERLAY_COLOR, fill: OVERLAY_COLOR } });
      data.push(c.ovMeans, c.ovYs);
    }

    var opts = {
      width: chartWidth(),
      height: HEIGHT,
      legend: { show: false },
      scales: {
        // The x range is the data's with room on each side, unless set (zoom, URL).
        x: { time: view.x === "time", range: function (u, min, max) {
          return min == null || (min === dataMin && max === dataMax) ? full : [min, max];
        } },
        y: log ? { distr: 3, range: function () { return [ext.lo / 1.15, ext.hi * 1.15]; } } : {
          range: function () {
            var pad = (ext.hi - ext.lo) * 0.08 || Math.abs(ext.hi) * 0.05 || 1;
            return [ext.lo - pad, ext.hi + pad];
          },
        },
      },
      axes: [
        view.x === "time" ? { space: 80 } : {
          // Ticks only at whole commit indices, labelled with the short SHA.
          incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000],
          space: 90,
          values: function (u, splits) {
            return splits.map(function (v) { return Number.isInteger(v) && c.labels[v] !== undefined ? c.labels[v] : ""; });
          },
        },
        { label: unit, size: 70 },
      ],
      // The mean line first, so the points are painted over it.
      series: series,
      cursor: {
        // Dragging across the plot zooms into that x range (a click is not a drag).
        drag: { x: true, y: false, setScale: true, dist: 5 },
        dataIdx: function (u, seriesIdx, closestIdx) {
          return seriesIdx === POINTS || seriesIdx === OV_POINTS ? nearestRepeat(u, c, seriesIdx, closestIdx) : closestIdx;
        },
      },
      hooks: {
        setCursor: [function (u) { hovered = showTooltip(u, c, tooltip); }],
        // The band under everything, intervals and markers over the points.
        drawAxes: [function (u) { drawBand(u, c); }],
        draw: [function (u) { drawIntervals(u, c); drawMarkers(u, markers); drawMergeBase(u, c.mergeBase); }],
        // A zoom writes its range into the URL; the full range clears it.
        setScale: [function (u, key) {
          if (key !== "x") return;
          var min = u.scales.x.min, max = u.scales.x.max;
          var whole = Math.abs(min - full[0]) < 1e-9 && Math.abs(max - full[1]) < 1e-9;
          var round = function (v) { return view.x === "time" ? Math.round(v) : Math.round(v * 1000) / 1000; };
          view.from = whole ? null : round(min);
          view.to = whole ? null : round(max);
          window.benchtrailSeriesView.writeView(view);
        }],
      },
    };

    u = new uPlot(opts, data, el);
    if (want) u.setScale("x", want);
    u.over.appendChild(tooltip);
    u.over.addEventListener("mouseleave", function () { tooltip.hidden = true; hovered = null; });
    u.over.addEventListener("pointerdown", function (e) { lastPointer = e.pointerType || "mouse"; });
    // A mouse click opens the run of the point the tooltip shows; on touch the first tap
    // only shows the tooltip (there is no hover), the second on the same point opens it.
    u.over.addEventListener("click", function () {
      if (hovered == null) return;
      if (lastPointer === "touch" && tapped !== hovered) { tapped = hovered; return; }
      window.location.href = "/runs/" + encodeURIComponent(c.runIds[hovered]);
    });
    drawLegend(c);
    window.benchtrailChart = {
      u: u, columns: c, markers: markers, ciColor: CI_COLOR, band: c.band, view: view,
      fullRange: full, log: log,
      overlay: overlayDoc ? { seriesId: overlayDoc.series.series_id, cell: overlayDoc.series.cell_key,
        branch: overlayDoc.overlayBranch || null } : null,
      mergeBase: c.mergeBase,
      glyph: function (k) { return glyphPos(u, markers, k); },
    };
    el.dataset.points = String(points.length);
    el.dataset.markers = String(markers.length);
    el.dataset.series = String(overlayDoc ? 2 : 1);
    setStatus("ready", "");
  }

  function getJson(url) {
    return fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" }).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.json();
    });
  }

  function seriesApi(id, branch) {
    return "/api/v1/projects/" + encodeURIComponent(el.dataset.project) + "/series/" + encodeURIComponent(id) +
      "?branch=" + encodeURIComponent(branch == null ? el.dataset.branch || "" : branch);
  }

  // The same change for every control: new view, URL, drawing.
  function changeView(patch) {
    Object.assign(view, patch);
    window.benchtrailSeriesView.writeView(view);
    draw();
  }

  function control(html) {
    var span = document.createElement("span");
    span.className = "chart-control";
    span.innerHTML = html;
    controls.appendChild(span);
    return span;
  }

  function buildControls() {
    control('<label>X axis <select id="chart-x"><option value="commit">commit order</option><option value="time">commit date</option></select></label>');
    control('<label><input type="checkbox" id="chart-log"> log scale</label>');
    control('<button type="button" id="chart-reset">Reset zoom</button>');
    control('<label>Overlay <select id="chart-overlay"><option value="none">none</option></select></label>');
    var xSel = document.getElementById("chart-x"), logBox = document.getElementById("chart-log");
    var ovSel = document.getElementById("chart-overlay");
    xSel.value = view.x;
    logBox.checked = view.log;
    // A zoom range is in the units of its axis: switching axes shows everything.
    xSel.addEventListener("change", function () { changeView({ x: xSel.value, from: null, to: null }); });
    logBox.addEventListener("change", function () { changeView({ log: logBox.checked }); });
    document.getElementById("chart-reset").addEventListener("click", function () { changeView({ from: null, to: null }); });
    ovSel.addEventListener("change", function () { setOverlay(ovSel.value); });
    if (contextBranch) {
      var ctxOpt = document.createElement("option");
      ctxOpt.value = defaultOverlay;
      ctxOpt.textContent = "branch " + contextBranch;
      ovSel.appendChild(ctxOpt);
      ovSel.value = defaultOverlay;
    }
    controls.hidden = false;
    // The same metric and statistic in the project's other cells (and configurations).
    var h = document.getElementById("series-title").dataset;
    var list = "/api/v1/projects/" + encodeURIComponent(el.dataset.project) + "/series?limit=500&metric=" +
      encodeURIComponent(h.metric) + "&stat=" + encodeURIComponent(h.stat);
    getJson(list).then(function (page) {
      (page.items || []).forEach(function (s) {
        if (s.series_id === el.dataset.seriesId || (s.slo_profile || "") !== (h.profile || "")) return;
        var o = document.createElement("option");
        o.value = s.series_id;
        o.textContent = s.cell_key;
        ovSel.appendChild(o);
      });
      ovSel.value = chosenOverlay() || "none";
      ovSel.dataset.state = "ready";
    }).catch(function () { ovSel.dataset.state = "error"; });
  }

  // `choice`: a series id, "@<branch>" (this series on that branch) or "none"/"" (none). The
  // URL keeps it unless it is the page's default overlay.
  function setOverlay(choice) {
    var id = choice && choice !== "none" ? choice : null;
    view.overlay = id === defaultOverlay ? null : id || (defaultOverlay ? "none" : null);
    window.benchtrailSeriesView.writeView(view);
    if (!id) { overlayDoc = null; draw(); return; }
    setStatus("loading", "Loading the overlay…");
    var onBranch = id.charAt(0) === "@" ? id.slice(1) : null;
    var url = onBranch != null ? seriesApi(el.dataset.seriesId, onBranch) : seriesApi(id);
    getJson(url).then(function (doc) { doc.overlayBranch = onBranch; overlayDoc = doc; draw(); })
      .catch(function (e) { overlayDoc = null; draw(); setStatus("ready", "Could not load the overlay: " + e.message); });
  }

  setStatus("loading", "Loading points…");
  getJson(el.dataset.api)
    .then(function (doc) {
      mainDoc = doc;
      if (!doc.points || doc.points.length === 0) {
        setStatus("empty", "No points on this branch.");
        el.dataset.points = "0";
        return;
      }
      buildControls();
      window.addEventListener("resize", function () { if (u) u.setSize({ width: chartWidth(), height: HEIGHT }); });
      var first = chosenOverlay();
      if (first) setOverlay(first); else draw();
    })
    .catch(function (e) { setStatus("error", "Could not load the chart: " + e.message); });
})();
