// mcprt console: live updates over server-sent events. Pages work without
// it; with it, the page's content is fetched again when something it
// shows changes (the kinds in main's data-live).
(function () {
  "use strict";
  var main = document.getElementById("main");
  var badge = document.getElementById("live");
  var prefix = document.body.getAttribute("data-prefix");
  if (!main || !badge || !prefix || !window.EventSource || !window.fetch) return;
  var wanted = (main.getAttribute("data-live") || "").split(",").filter(Boolean);
  var pending = false, running = false;

  function busy() {
    var a = document.activeElement;
    return a && (a.tagName === "INPUT" || a.tagName === "TEXTAREA" || a.tagName === "SELECT") && main.contains(a);
  }

  function refresh() {
    if (running) { pending = true; return; }
    if (busy()) { pending = true; setTimeout(refresh, 1000); return; }
    running = true; pending = false;
    fetch(location.href, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.getElementById("main");
        if (fresh) main.replaceChildren.apply(main, Array.prototype.slice.call(fresh.childNodes).map(function (n) { return document.importNode(n, true); }));
        var foot = doc.querySelector("footer");
        if (foot) document.querySelector("footer").replaceChildren.apply(document.querySelector("footer"), Array.prototype.slice.call(foot.childNodes).map(function (n) { return document.importNode(n, true); }));
      })
      .catch(function () {})
      .then(function () { running = false; if (pending) refresh(); });
  }

  var es = new EventSource(prefix + "events");
  es.onopen = function () { badge.textContent = "● live"; badge.className = "live on"; };
  es.onerror = function () { badge.textContent = "○ reconnecting"; badge.className = "live"; };
  es.addEventListener("change", function (ev) {
    var kinds = String(ev.data).split(",");
    for (var i = 0; i < kinds.length; i++) {
      if (wanted.indexOf(kinds[i]) >= 0) { refresh(); return; }
    }
  });
})();
