// dynlocust's additions to Locust's web page (dynlocust/plugin/webui.py injects this file into the index page).
// Locust's page polls /stats/requests only while its runner says spawning or running; everything that must go on
// after that (the run's end, its conclusion, its report) is polled here, from ./dynamodb/state.json, every REFRESH ms.
(function () {
  var TAB = "__TAB__";
  var REFRESH = __REFRESH_MS__;

  function onTab() {
    return new URLSearchParams(window.location.search).get("tab") === TAB;
  }

  function tableBox() {
    var table = document.querySelector("table");
    return table ? table.parentElement : null;
  }

  // the window table has 18 columns: Locust's roomy cells would push the reasons out of view below ~1600 px.
  // Tighter cells, figures on one line; the phase, the late sends, the table state and the reasons wrap: it fits
  // from 1280 px on.
  var CSS = "[data-dynlocust-table] th, [data-dynlocust-table] td {padding:4px 6px;font-size:12px;line-height:1.4}" +
    "[data-dynlocust-table] td {white-space:nowrap}" +
    "[data-dynlocust-table] td:last-child {white-space:normal;min-width:9em;overflow-wrap:anywhere}" +
    "[data-dynlocust-table] td:nth-last-child(3) {white-space:normal;min-width:6em;overflow-wrap:anywhere}" +
    "[data-dynlocust-table] td:nth-child(2), [data-dynlocust-table] td:nth-child(13) {white-space:normal}";
  function layout() {
    if (!document.getElementById("dynlocust-style")) {
      var style = document.createElement("style");
      style.id = "dynlocust-style";
      style.textContent = CSS;
      document.head.appendChild(style);
    }
    var box = tableBox();
    document.querySelectorAll("[data-dynlocust-table]").forEach(function (e) {
      if (e !== box || !onTab()) delete e.dataset.dynlocustTable;
    });
    if (box && onTab()) box.dataset.dynlocustTable = TAB;
  }

  // the live chart, under the DynamoDB table only
  function chart() {
    var img = document.getElementById("dynlocust-chart");
    var box = tableBox();
    if (!onTab() || !box) { if (img) img.remove(); return; }
    if (!img) {
      img = document.createElement("img");
      img.id = "dynlocust-chart";
      img.alt = "target, offered, sent, accepted and throttled requests per second per bin";
      img.style.cssText = "display:block;max-width:100%;margin-top:16px;background:#fff";
      box.parentElement.insertBefore(img, box.nextSibling);
    }
    img.src = "./" + TAB + "/chart.svg?t=" + Date.now();
  }

  // what set-up is doing, on every tab, until the first window starts
  function banner(s) {
    var box = document.getElementById("dynlocust-setup");
    if (!s.setup) { if (box) box.remove(); return; }
    if (!box) {
      box = document.createElement("div");
      box.id = "dynlocust-setup";
      box.setAttribute("role", "status");
      box.style.cssText = "position:fixed;bottom:12px;left:12px;right:12px;z-index:2000;padding:10px 14px;" +
        "border-radius:4px;font:14px sans-serif;color:#fff;box-shadow:0 2px 6px rgba(0,0,0,.3)";
      document.body.appendChild(box);
    }
    box.style.background = s.setup_failed ? "#b00020" : "#1565c0";
    box.textContent = "dynlocust: " + s.setup;
  }

  function line(panel, field, text, href) {
    var p = document.createElement("p");
    p.dataset.field = field;
    p.style.cssText = "margin:4px 0";
    if (href) {
      var a = document.createElement("a");
      a.href = href;
      a.target = "_blank";
      a.textContent = text;
      p.appendChild(a);
    } else {
      p.textContent = text;
    }
    panel.appendChild(p);
  }

  // A Start begins a new run. Until the new run's own rows arrive, the tab shows neither the last run's panel (its
  // exit code) nor its rows, which Locust's page keeps until its next poll of /stats/requests (up to 2 s), nor
  // the last run's state.json answer (until our next poll): from Locust's answer to the Start, the table is
  // hidden; once state.json names another run, Locust's next poll brings that run's rows, and the table shows again.
  var startedFrom = null;  // {run: the run id shown when Start was answered, seen: the new run named}
  var shownRun = null;
  var hidden = null;
  function starting() {
    startedFrom = {run: shownRun, seen: false};
    var box = tableBox();
    if (box && onTab()) { hidden = box; box.style.visibility = "hidden"; }
    var div = document.getElementById("dynlocust-run");
    if (div) div.remove();
    shown = "";
    var setup = document.getElementById("dynlocust-setup");
    if (setup) setup.remove();
    poll();
  }
  function started() {
    startedFrom = null;
    if (hidden) hidden.style.visibility = "";
    hidden = null;
  }
  var nativeFetch = window.fetch;
  window.fetch = function (input) {
    var url = String(typeof input === "string" ? input : (input && input.url) || "").split("?")[0];
    var answer = nativeFetch.apply(this, arguments);
    if (/(^|\/)swarm$/.test(url)) {
      answer.then(function (r) { if (r.ok) starting(); }).catch(function () {});
    } else if (startedFrom && startedFrom.seen && /(^|\/)stats\/requests$/.test(url)) {
      answer.then(function () { setTimeout(started, 50); }).catch(function () {});  // once Locust drew them
    }
    return answer;
  };

  // the current run, above the DynamoDB table: where it is, then how it ended
  var shown = "";
  function panel(s) {
    var box = tableBox();
    var div = document.getElementById("dynlocust-run");
    if (startedFrom) {
      if (!s.run || s.run.run_id === startedFrom.run) { if (div) div.remove(); shown = ""; return; }
      startedFrom.seen = true;
    }
    shownRun = s.run ? s.run.run_id : null;
    if (!onTab() || !box || !s.run) { if (div) div.remove(); shown = ""; return; }
    if (!div) {
      div = document.createElement("div");
      div.id = "dynlocust-run";
      div.setAttribute("role", "status");
      div.style.cssText = "margin:8px 0 16px;padding:8px 12px;border-left:4px solid #1565c0;font:14px sans-serif";
      box.parentElement.insertBefore(div, box);
      shown = "";
    }
    var text = JSON.stringify(s.run);
    if (text === shown) return;
    shown = text;
    var r = s.run;
    div.dataset.stage = r.stage;
    div.dataset.runId = r.run_id;
    div.style.borderLeftColor = r.stage === "finished" ? (r.exit_code === 0 ? "#2e7d32" : "#b00020") : "#1565c0";
    div.replaceChildren();
    line(div, "status", r.status);
    if (r.conclusion) line(div, "conclusion", "conclusion: " + r.conclusion);
    if (r.slo) line(div, "slo", r.slo);
    if (r.report_url) line(div, "report", "report: " + r.report_path, r.report_url);
    else if (r.report_error) line(div, "report", "report: not written (" + r.report_error + ")");
  }

  function poll() {
    layout();
    chart();
    fetch("./" + TAB + "/state.json", {cache: "no-store"})
      .then(function (r) { return r.json(); })
      .then(function (s) {
        if (startedFrom && (!s.run || s.run.run_id === startedFrom.run)) s = {run: null, setup: null};  // the last run's
        banner(s);
        panel(s);
      })
      .catch(function () {});
  }

  setInterval(poll, REFRESH);
})();
