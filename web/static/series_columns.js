// benchtrail series explorer: the series page's points as uPlot's aligned column arrays,
// kept apart from the drawing (series.js) so each file has one purpose. Exposes
// window.benchtrailSeriesColumns.columns(points, overlayPoints, mode, baselineWindow, cis):
// API points (and an overlay series' points, or null) -> {xs, ys, ovYs, means, ovMeans,
// shas, subjects, runIds, ns, repeats, cis, commitTimes, labels, commits, band, baselineOf,
// xOfCommit}. `cis` are the main points' intervals in API order (null where none).
(function () {
  "use strict";

  // Commit time (else the run's time) in seconds, uPlot's time unit.
  function timeOf(p) {
    var t = Date.parse(p.commit_time || p.run_at);
    return isFinite(t) ? t / 1000 : null;
  }

  // The commits of the main series in API (commit) order, then those only the overlay has,
  // each inserted before the first commit committed later than it.
  function commitList(points, overlayPoints) {
    var list = [], seen = new Set();
    points.forEach(function (p) {
      if (seen.has(p.commit_sha)) return;
      seen.add(p.commit_sha);
      list.push({ sha: p.commit_sha, time: timeOf(p), subject: p.commit_subject || "", commitTime: p.commit_time || null });
    });
    (overlayPoints || []).forEach(function (p) {
      if (seen.has(p.commit_sha)) return;
      seen.add(p.commit_sha);
      var t = timeOf(p);
      var entry = { sha: p.commit_sha, time: t, subject: p.commit_subject || "", commitTime: p.commit_time || null };
      var pos = t == null ? -1 : list.findIndex(function (c) { return c.time != null && c.time > t; });
      if (pos < 0) list.push(entry); else list.splice(pos, 0, entry);
    });
    return list;
  }

  // API points -> uPlot's aligned columns: one row per point of either series (the other
  // series null there), sorted by x; x is the commit's index (commit order) or its commit
  // time (time axis). Repeats of a commit share an x. Each series' mean per commit sits at
  // its first row of that commit, nulls elsewhere.
  function columns(points, overlayPoints, mode, baselineWindow, cis) {
    var commits = commitList(points, overlayPoints);
    var index = new Map();
    commits.forEach(function (cm, i) { index.set(cm.sha, i); });
    var xOfCommit = function (sha) {
      var i = index.get(sha);
      return i === undefined ? null : mode === "time" ? commits[i].time : i;
    };
    var rows = [];
    points.forEach(function (p, i) { rows.push({ p: p, main: true, ci: cis[i], order: i }); });
    (overlayPoints || []).forEach(function (p, i) { rows.push({ p: p, main: false, ci: null, order: points.length + i }); });
    rows.forEach(function (r) { r.x = xOfCommit(r.p.commit_sha); });
    rows = rows.filter(function (r) { return r.x != null; });
    rows.sort(function (a, b) { return a.x - b.x || a.order - b.order; });

    function perCommitMeans(main) {
      var sums = new Map();
      rows.forEach(function (r) {
        if (r.main !== main) return;
        var s = sums.get(r.p.commit_sha) || { sum: 0, count: 0 };
        s.sum += r.p.value; s.count += 1;
        sums.set(r.p.commit_sha, s);
      });
      return sums;
    }
    var mainSums = perCommitMeans(true), ovSums = perCommitMeans(false);
    var c = { mode: mode, xs: [], ys: [], ovYs: [], shas: [], subjects: [], runIds: [], ns: [], repeats: [],
      cis: [], means: [], ovMeans: [], commitTimes: [], main: [],
      labels: commits.map(function (cm) { return cm.sha.slice(0, 10); }), commits: commits };
    var firstMain = new Set(), firstOv = new Set();
    rows.forEach(function (r) {
      var p = r.p;
      c.xs.push(r.x);
      c.ys.push(r.main ? p.value : null);
      c.ovYs.push(r.main ? null : p.value);
      c.shas.push(p.commit_sha);
      c.subjects.push(p.commit_subject || "");
      c.runIds.push(p.run_id);
      c.ns.push(p.n == null ? null : p.n);
      c.repeats.push(p.repeat_index);
      c.cis.push(r.ci);
      c.commitTimes.push(p.commit_time || null);
      c.main.push(r.main);
      var firsts = r.main ? firstMain : firstOv, sums = r.main ? mainSums : ovSums;
      var mean = null;
      if (!firsts.has(p.commit_sha)) {
        firsts.add(p.commit_sha);
        var s = sums.get(p.commit_sha);
        mean = s.sum / s.count;
      }
      (r.main ? c.means : c.ovMeans).push(mean);
      (r.main ? c.ovMeans : c.means).push(null);
    });

    // The baseline band of the main series, per commit in commit order.
    // Runs excluded from baselines do not count in the band, as in the analysis: a commit
    // whose every run is excluded has no mean there (null).
    var mainCommits = [], kept = new Map();
    points.forEach(function (p) {
      if (p.excluded) return;
      var k = kept.get(p.commit_sha) || { sum: 0, count: 0 };
      k.sum += p.value; k.count += 1;
      kept.set(p.commit_sha, k);
    });
    points.forEach(function (p) {
      if (mainCommits.some(function (m) { return m.sha === p.commit_sha; })) return;
      var k = kept.get(p.commit_sha);
      mainCommits.push({ sha: p.commit_sha, mean: k ? k.sum / k.count : null });
    });
    var band = window.benchtrailSeriesView.baselineBand(mainCommits, baselineWindow);
    c.band = { xs: [], lo: [], mid: [], hi: [], shas: [] };
    c.baselineOf = new Map();
    mainCommits.forEach(function (m, k) {
      if (!band[k]) return;
      c.band.xs.push(xOfCommit(m.sha));
      c.band.lo.push(band[k].lo);
      c.band.mid.push(band[k].mean);
      c.band.hi.push(band[k].hi);
      c.band.shas.push(m.sha);
      c.baselineOf.set(m.sha, band[k].mean);
    });
    c.xOfCommit = xOfCommit;
    return c;
  }

  window.benchtrailSeriesColumns = { columns: columns };
})();
