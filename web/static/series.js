// benchtrail series chart: draws one series across commits with uPlot (vendored, global
// `uPlot`). Plain script, no build step.
//
// Reads the JSON API named in #chart[data-api] ({series, branch, points: [{commit_sha,
// commit_subject, run_id, repeat_index, value, n, ...}]}), turns the points into uPlot's
// column arrays (x = commit order index, so repeats of a commit share an x), and draws every
// point plus a thin line through each commit's mean. Hovering shows a tooltip for the
// nearest point (by x, then by y among repeats); clicking opens that point's run.
//
// Confidence intervals of the points (p50/p99 series) come from the server's points table
// (#points tr[data-ci-low][data-ci-high], same order as the API's points): each is drawn as a
// teal whisker through its point and named in the tooltip.
//
// Alerts of the series on this branch are listed by the server in #series-alerts (one
// li[data-x][data-kind][data-summary] each); they are marked on the chart at their commit:
// a vertical line and a glyph per alert (▼ regression red, ▲ improvement green, ◆ trade-off
// purple with a dashed line, ● others grey), and the tooltip of a commit lists its alerts'
// one-sentence summaries.
//
// For tests and scripts, the chart container gets data-state="ready",
// data-points=<count> and data-markers=<count> once drawn, and window.benchtrailChart holds
// the uPlot instance, the columns and the markers ({x, kind, summary, status, id}).
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

  // API points (commit order) -> columns.
  function columns(points) {
    var xOf = new Map();
    var c = { xs: [], ys: [], shas: [], subjects: [], runIds: [], ns: [], repeats: [], labels: [], means: [],
      cis: readIntervals(points.length) };
    var sums = [];
    points.forEach(function (p) {
      if (!xOf.has(p.commit_sha)) {
        xOf.set(p.commit_sha, xOf.size);
        c.labels.push(p.commit_sha.slice(0, 10));
        sums.push({ sum: 0, count: 0 });
      }
      var x = xOf.get(p.commit_sha);
      c.xs.push(x);
      c.ys.push(p.value);
      c.shas.push(p.commit_sha);
      c.subjects.push(p.commit_subject || "");
      c.runIds.push(p.run_id);
      c.ns.push(p.n == null ? null : p.n);
      c.repeats.push(p.repeat_index);
      sums[x].sum += p.value;
      sums[x].count += 1;
    });
    // uPlot needs x ascending; storage sends commit order, but sort defensively (stable).
    var order = c.xs.map(function (_, i) { return i; });
    order.sort(function (a, b) { return c.xs[a] - c.xs[b] || a - b; });
    ["xs", "ys", "shas", "subjects", "runIds", "ns", "repeats", "cis"].forEach(function (k) {
      var col = c[k];
      c[k] = order.map(function (i) { return col[i]; });
    });
    // The mean line has one value per commit, at the commit's first point; nulls elsewhere.
    var seen = new Set();
    c.means = c.xs.map(function (x) {
      if (seen.has(x)) return null;
      seen.add(x);
      return sums[x].sum / sums[x].count;
    });
    return c;
  }

  // Among the points sharing the hovered x (repeats of a commit), the one nearest the cursor
  // vertically; uPlot alone would always pick the same one of them.
  function nearestRepeat(u, c, idx) {
    if (idx == null) return idx;
    var top = u.cursor.top;
    if (top == null || top < 0) return idx;
    var yAtCursor = u.posToVal(top, "y");
    var x = c.xs[idx];
    var lo = idx, hi = idx;
    while (lo > 0 && c.xs[lo - 1] === x) lo--;
    while (hi < c.xs.length - 1 && c.xs[hi + 1] === x) hi++;
    var best = idx, bestDist = Infinity;
    for (var i = lo; i <= hi; i++) {
      var d = Math.abs(c.ys[i] - yAtCursor);
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
      out.push({ x: Number(li.dataset.x), kind: li.dataset.kind, summary: li.dataset.summary || "",
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

  function render(doc) {
    var points = (doc && doc.points) || [];
    if (points.length === 0) {
      setStatus("empty", "No points on this branch.");
      el.dataset.points = "0";
      return;
    }
    var c = columns(points);
    var markers = readMarkers();
    // With intervals, the y scale spans them too (else uPlot's automatic range).
    var ciLo = Infinity, ciHi = -Infinity;
    c.cis.forEach(function (ci) { if (ci) { ciLo = Math.min(ciLo, ci.low); ciHi = Math.max(ciHi, ci.high); } });
    var yScale = isFinite(ciLo) ? {
      range: function (u, min, max) {
        var lo = Math.min(min, ciLo), hi = Math.max(max, ciHi), pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.05 || 1;
        return [lo - pad, hi + pad];
      },
    } : {};
    var tooltip = document.createElement("div");
    tooltip.className = "tooltip";
    tooltip.id = "chart-tooltip";
    tooltip.hidden = true;
    var hovered = null;

    function showTooltip(u) {
      var i = u.cursor.idxs ? u.cursor.idxs[POINTS] : u.cursor.idx;
      if (i == null || u.cursor.left == null || u.cursor.left < 0) {
        tooltip.hidden = true;
        hovered = null;
        return;
      }
      hovered = i;
      var value = String(c.ys[i]);
      tooltip.dataset.commitSha = c.shas[i];
      tooltip.dataset.value = value;
      tooltip.dataset.runId = c.runIds[i];
      tooltip.textContent = "";
      var head = document.createElement("div");
      var sha = document.createElement("code");
      sha.textContent = c.shas[i].slice(0, 10);
      head.appendChild(sha);
      if (c.repeats[i] !== 0) head.appendChild(document.createTextNode(" · repeat " + c.repeats[i]));
      tooltip.appendChild(head);
      if (c.subjects[i]) {
        var subject = document.createElement("div");
        subject.className = "subject";
        subject.textContent = c.subjects[i];
        tooltip.appendChild(subject);
      }
      var val = document.createElement("div");
      var strong = document.createElement("strong");
      strong.className = "value";
      strong.textContent = value + (unit ? " " + unit : "");
      val.appendChild(strong);
      if (c.ns[i] != null) val.appendChild(document.createTextNode(" · n=" + c.ns[i]));
      tooltip.appendChild(val);
      if (c.cis[i]) {
        var ci = document.createElement("div");
        ci.className = "ci-line";
        ci.textContent = "interval " + c.cis[i].text;
        tooltip.appendChild(ci);
      }
      markers.forEach(function (m) {
        if (m.x !== c.xs[i]) return;
        var line = document.createElement("div");
        line.className = "alert-line";
        line.dataset.kind = m.kind;
        var kind = document.createElement("strong");
        kind.style.color = (MARK[m.kind] || MARK_OTHER).color;
        kind.textContent = (KIND_TEXT[m.kind] || "● " + m.kind.replace("_", " ")) + " (" + m.status + "): ";
        line.appendChild(kind);
        line.appendChild(document.createTextNode(m.summary));
        tooltip.appendChild(line);
      });
      tooltip.hidden = false;
      // Place next to the point, flipped left near the right edge.
      var px = u.valToPos(c.xs[i], "x");
      var py = u.valToPos(c.ys[i], "y");
      var w = tooltip.offsetWidth;
      var left = px + 12;
      if (left + w > u.over.clientWidth) left = Math.max(0, px - 12 - w);
      tooltip.style.left = left + "px";
      tooltip.style.top = Math.max(0, py - tooltip.offsetHeight - 8) + "px";
    }

    var opts = {
      width: Math.max(300, el.clientWidth || 800),
      height: HEIGHT,
      legend: { show: false },
      scales: {
        // Half a commit of room on each side so the first and last points are not clipped.
        x: { time: false, range: function (u, min, max) { return [min - 0.5, max + 0.5]; } },
        y: yScale,
      },
      axes: [
        {
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
      series: [
        {},
        { label: "mean per commit", stroke: "#9aa7b8", width: 1.5, spanGaps: true, points: { show: false } },
        {
          label: el.dataset.label || "value",
          stroke: "#1f5fbf",
          fill: "#1f5fbf",
          width: 0,
          paths: function () { return null; },
          points: { show: true, size: 8, stroke: "#1f5fbf", fill: "#1f5fbf" },
        },
      ],
      cursor: {
        drag: { x: false, y: false },
        dataIdx: function (u, seriesIdx, closestIdx) {
          return seriesIdx === POINTS ? nearestRepeat(u, c, closestIdx) : closestIdx;
        },
      },
      hooks: {
        setCursor: [showTooltip],
        // Intervals and markers over the points and the mean line.
        draw: [function (u) { drawIntervals(u, c); drawMarkers(u, markers); }],
      },
    };

    var u = new uPlot(opts, [c.xs, c.means, c.ys], el);
    u.over.appendChild(tooltip);
    u.over.addEventListener("mouseleave", function () { tooltip.hidden = true; hovered = null; });
    // Clicking opens the run of the point the tooltip shows.
    u.over.addEventListener("click", function () {
      if (hovered != null) window.location.href = "/runs/" + encodeURIComponent(c.runIds[hovered]);
    });
    window.addEventListener("resize", function () {
      u.setSize({ width: Math.max(300, el.clientWidth || 800), height: HEIGHT });
    });
    window.benchtrailChart = {
      u: u, columns: c, markers: markers, ciColor: CI_COLOR,
      glyph: function (k) { return glyphPos(u, markers, k); },
    };
    el.dataset.points = String(c.xs.length);
    el.dataset.markers = String(markers.length);
    setStatus("ready", "");
  }

  setStatus("loading", "Loading points…");
  fetch(el.dataset.api, { headers: { Accept: "application/json" }, credentials: "same-origin" })
    .then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.json();
    })
    .then(render)
    .catch(function (e) { setStatus("error", "Could not load the chart: " + e.message); });
})();
