// What the kiosk's pages share: the game's (kiosk.js) and the calibration wizard's
// (calibrate.js). Each view from /events (Server-Sent Events) is drawn whole; a part of the
// page is rewritten only when its HTML changes. No build step, no libraries.
"use strict";

const $ = (id) => document.getElementById(id);
const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);

function put(el, html) {
  if (el._html === html) return false;
  el.innerHTML = html;
  el._html = html;
  return true;
}

// Follow the views from /events, reconnecting for as long as the page is open. The game's
// kiosk and the wizard are served on the same port, one at a time: a view from the other
// one (the wizard started, or the game back after it) takes the screen to its page.
function listen(draw) {
  const source = new EventSource("/events");
  source.addEventListener("view", (e) => {
    $("conn").hidden = true;
    const v = JSON.parse(e.data);
    const page = v.page || "/";
    if (page !== location.pathname) {
      source.close();
      location.replace(page);
      return;
    }
    draw(v);
  });
  source.onopen = () => {
    $("conn").hidden = true;
  };
  source.onerror = () => {
    $("conn").hidden = false;
    if (source.readyState === EventSource.CLOSED) {
      // The browser gives up on an HTTP error; keep trying, as a kiosk must.
      source.close();
      setTimeout(() => listen(draw), 2000);
    }
  };
}
