"""The live inspector's page and script (served by :mod:`rxgem.server.inspector._page`).

The script writes every value it gets with ``textContent``; the one piece of markup it
inserts is the diagram's SVG (fetched apart from the feed's summaries), drawn by
:mod:`rxgem.viz`, which escapes every text it draws. The page's Content-Security-Policy
allows no inline script either.
"""

from __future__ import annotations

from typing import Final

__all__ = ["PAGE", "SCRIPT"]

PAGE: Final = b"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>rxgem inspector</title>
<style>
body{font-family:system-ui,sans-serif;margin:1em;color:#222}
.exchange{border:1px solid #ccc;border-radius:6px;margin:0 0 1em;padding:.5em .8em}
.head{display:flex;gap:1.2em;flex-wrap:wrap;align-items:baseline}
.model{font-weight:600}.bad{color:#b00}.diagram{overflow-x:auto}
</style></head>
<body data-state="loading">
<h1>rxgem inspector</h1>
<p>The last requests to Gemini, newest first, drawn stage by stage as they stream.
<span id="feed-state">connecting</span></p>
<div id="exchanges"></div>
<script src="/inspect/app.js"></script>
</body></html>
"""

SCRIPT: Final = b"""(() => {
  "use strict";
  const list = document.getElementById("exchanges");
  const state = document.getElementById("feed-state");
  const shown = new Map();
  const ms = (v) => (v === null || v === undefined) ? "-" : v.toFixed(0) + " ms";
  const field = (parent, cls, text) => {
    const span = document.createElement("span");
    span.className = cls;
    span.textContent = text;
    parent.appendChild(span);
    return span;
  };
  // the diagram of an exchange: fetched apart, one fetch at a time, again if it changed
  const draw = (entry) => {
    if (entry.busy) { entry.again = true; return; }
    entry.busy = true;
    entry.again = false;
    fetch("/inspect/exchanges/" + entry.id + ".svg", {credentials: "same-origin"})
      .then(async (r) => {
        const text = await r.text();
        const type = r.headers.get("content-type") || "";
        if (r.ok && type.startsWith("image/svg+xml")) {
          entry.diagram.innerHTML = text;  // drawn by rxgem.viz: every text in it is escaped
        } else {
          entry.diagram.textContent = text;
        }
      })
      .catch(() => {})
      .finally(() => { entry.busy = false; if (entry.again) draw(entry); });
  };
  const show = (x) => {
    let entry = shown.get(x.id);
    if (!entry) {
      const box = document.createElement("section");
      box.className = "exchange";
      box.dataset.id = String(x.id);
      const head = document.createElement("div");
      head.className = "head";
      const diagram = document.createElement("div");
      diagram.className = "diagram";
      box.append(head, diagram);
      list.prepend(box);
      entry = {id: x.id, box: box, head: head, diagram: diagram, busy: false, again: false};
      shown.set(x.id, entry);
    }
    const head = entry.head;
    head.replaceChildren();
    entry.box.dataset.done = String(x.done);
    field(head, "model", x.model || "(no model)");
    field(head, "route", x.route + " " + x.request_id);
    field(head, "status " + (x.status === 200 ? "" : "bad"),
          "HTTP " + (x.status === null ? "..." : x.status));
    field(head, "timing", "first byte " + ms(x.first_byte_ms) + ", total " +
          (x.done ? ms(x.duration_ms) : "streaming"));
    field(head, "size", x.bytes + " bytes" + (x.truncated ? " (truncated)" : ""));
    if (x.error) field(head, "error bad", x.error);
    if (x.drawn_pieces < x.pieces) {
      field(head, "drawn", "diagram: the first " + x.drawn_pieces + " of " + x.pieces + " pieces");
    }
    const link = document.createElement("a");
    link.href = "/inspect/exchanges/" + x.id + ".json";
    link.textContent = "download";
    link.setAttribute("download", "rxgem-exchange-" + x.id + ".json");
    head.appendChild(link);
    if (x.status === 200 && x.pieces > 0) draw(entry);
  };
  const events = new EventSource("/inspect/events");
  events.onopen = () => { state.textContent = "live"; document.body.dataset.state = "live"; };
  events.onerror = () => { state.textContent = "reconnecting"; };
  events.onmessage = (message) => show(JSON.parse(message.data));
  events.addEventListener("keep", (message) => {
    const kept = new Set(JSON.parse(message.data));
    for (const [id, entry] of shown) {
      if (!kept.has(id)) { entry.box.remove(); shown.delete(id); }
    }
  });
})();
"""
