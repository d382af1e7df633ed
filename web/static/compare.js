// benchtrail charts of the compare page. Plain script, no build step; uPlot is vendored
// (global `uPlot`). Baseline is Okabe–Ito blue with a solid line, the candidate orange with a
// dashed one: never color alone.
//
// Per-request distributions: for each figure.cdf, the empirical CDF of a per-request metric
// (TTFT, TPOT of each successful request) of both sides, from data-baseline / data-candidate
// (`value:share` pairs, exact order statistics); the quantile table under it is its text.
// Once drawn the chart element gets data-state="ready", and window.benchtrailCdf holds
// {id: {baseline: [[value, share]...], candidate: [...]}}.
//
// Capacity curves: for each figure.capacity-curve, goodput against load (both sides) and SLO
// attainment (percent of requests meeting every threshold) against load for the baseline and
// the candidate, with the attainment target as a dashed line. Plain script, no build step;
// uPlot is vendored (global `uPlot`).
//
// The numbers come from the figure's own table (tr.curve-point[data-load][data-baseline]
// [data-candidate], exact values; an empty value: that side did not measure the load), which
// stays on the page as the chart's text alternative. Once drawn, the chart element gets
// data-state="ready" and data-points=<loads>, and window.benchtrailCapacity holds
// {id: {x, baseline, candidate, baseline_goodput, candidate_goodput}} for tests and scripts
// (goodput rows: data-baseline-goodput / data-candidate-goodput, req/s).
(function () {
  "use strict";
  if (typeof uPlot === "undefined") return;
  var drawn = {};
  window.benchtrailCapacity = drawn;
  var cdfs = {};
  window.benchtrailCdf = cdfs;

  function pairs(text) {
    if (!text) return [];
    return text.split(",").map(function (p) {
      var kv = p.split(":");
      return [Number(kv[0]), Number(kv[1])];
    });
  }

  // Both sides on one x axis: uPlot wants one x array, so each side's shares are placed at
  // the union of values as a step function (the share at or below each value).
  function stepAt(points, xs) {
    var out = [], j = -1;
    xs.forEach(function (x) {
      while (j + 1 < points.length && points[j + 1][0] <= x) j++;
      out.push(j < 0 ? 0 : points[j][1] * 100);
    });
    return out;
  }

  document.querySelectorAll("figure.cdf").forEach(function (fig) {
    var chart = fig.querySelector(".cdf-chart");
    var b = pairs(fig.dataset.baseline), c = pairs(fig.dataset.candidate);
    if (!chart || (b.length === 0 && c.length === 0)) return;
    var xs = b.concat(c).map(function (p) { return p[0]; });
    xs.sort(function (p, q) { return p - q; });
    xs = xs.filter(function (x, i) { return i === 0 || x !== xs[i - 1]; });
    var width = Math.max(280, Math.min(chart.clientWidth || 640, 720));
    var steps = uPlot.paths.stepped({ align: 1 });
    new uPlot({
      width: width,
      height: 220,
      scales: { x: { time: false }, y: { range: [0, 100] } },
      axes: [{ label: fig.dataset.metric.toUpperCase() + " (ms)" }, { label: "requests %" }],
      series: [
        { label: "ms" },
        { label: "baseline", stroke: "#0072b2", width: 2, paths: steps, points: { show: false } },
        { label: "candidate", stroke: "#d55e00", width: 2, dash: [8, 4], paths: steps, points: { show: false } }
      ]
    }, [xs, stepAt(b, xs), stepAt(c, xs)], chart);
    cdfs[fig.id] = { baseline: b, candidate: c };
    chart.dataset.state = "ready";
  });

  function num(s) {
    return s === "" || s === undefined ? null : Number(s);
  }

  document.querySelectorAll("figure.capacity-curve").forEach(function (fig) {
    var chart = fig.querySelector(".capacity-chart");
    var rows = fig.querySelectorAll("tr.curve-point");
    if (!chart || rows.length === 0) return;
    var x = [], baseline = [], candidate = [];
    rows.forEach(function (r) {
      x.push(Number(r.dataset.load));
      baseline.push(num(r.dataset.baseline));
      candidate.push(num(r.dataset.candidate));
    });
    var target = Number(fig.dataset.target);
    var unit = fig.dataset.unit || "";
    var width = Math.max(280, Math.min(chart.clientWidth || 640, 720));
    // Sweeps double their load (1, 4, 16 …): a log₂ axis spaces them evenly; a load of 0 or
    // less cannot be on one.
    var logX = x.every(function (v) { return v > 0; });
    var opts = {
      width: width,
      height: 260,
      scales: {
        x: logX ? { time: false, distr: 3, log: 2 } : { time: false },
        y: { range: [0, 100] }
      },
      axes: [
        { label: "load" + (unit ? " (" + unit + ")" : "") },
        { label: "attainment %" }
      ],
      series: [
        { label: "load" },
        // Okabe–Ito blue and orange, with different dashes and markers: never color alone.
        { label: "baseline", stroke: "#0072b2", width: 2, points: { size: 7 }, spanGaps: true },
        { label: "candidate", stroke: "#d55e00", width: 2, dash: [8, 4], points: { size: 7 }, spanGaps: true },
        { label: "target", stroke: "#5f6b7a", width: 1, dash: [2, 4], points: { show: false } }
      ]
    };
    var targetLine = x.map(function () { return target; });
    new uPlot(opts, [x, baseline, candidate, targetLine], chart);
    // Goodput (requests per second meeting every threshold) against the same loads.
    var gb = [], gc = [];
    rows.forEach(function (r) {
      gb.push(num(r.dataset.baselineGoodput));
      gc.push(num(r.dataset.candidateGoodput));
    });
    var goodputChart = fig.querySelector(".goodput-chart");
    if (goodputChart) {
      new uPlot({
        width: width,
        height: 220,
        scales: { x: opts.scales.x, y: { range: function (u, min, max) { return [0, max > 0 ? max * 1.1 : 1]; } } },
        axes: [opts.axes[0], { label: "goodput (req/s)" }],
        series: [opts.series[0], opts.series[1], opts.series[2]]
      }, [x, gb, gc], goodputChart);
      goodputChart.dataset.state = "ready";
    }
    drawn[fig.id] = { x: x, baseline: baseline, candidate: candidate, baseline_goodput: gb, candidate_goodput: gc };
    chart.dataset.points = String(x.length);
    chart.dataset.state = "ready";
  });
})();
