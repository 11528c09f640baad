// Instant replay: a tap on a disputed ruling in the log (a stack won, a penalty, a dead heat)
// opens its clip: the camera's frames, stepped with the buttons or the arrow keys, over a
// timeline of the lay and each seat's press, to the microsecond. Read-only: anyone watching
// may open one, no token. Loaded after kiosk.js (live.js: $, esc, put).
"use strict";

const replay = (window.replay = { clip: null, k: 0, told: null });

// A time in microseconds, grouped for reading: "+252 133 µs".
function micros(us, sign = true) {
  const digits = String(Math.abs(us)).replace(/\B(?=(\d{3})+(?!\d))/g, "\u2009");
  return `${sign ? (us < 0 ? "−" : "+") : ""}${digits} µs`;
}

// The presses zoomed: from a little before the first to a little after the last, so that
// presses a few ms apart stand apart (on the clip's line they are a pixel or two apart).
function raceHtml(marks) {
  const presses = marks.filter((m) => m.kind === "press");
  if (!presses.length) return "";
  const lo = Math.min(...presses.map((m) => m.t));
  const hi = Math.max(...presses.map((m) => m.t));
  const pad = Math.max(2000, (hi - lo) * 0.15);
  const span = hi - lo + 2 * pad;
  return presses
    .map((m, i) => {
      const left = (((m.t - lo + pad) / span) * 100).toFixed(4);
      const gap = m.after_first_us ? micros(m.after_first_us) : "first";
      return (
        `<button type="button" class="mark press${i % 2 ? " low" : ""}" data-t="${m.t}" data-seat="${m.seat ?? ""}"` +
        ` style="left:${left}%"><span>${esc(m.name || "?")} ${gap}</span></button>`
      );
    })
    .join("");
}

function markHtml(m, i) {
  const who = m.name ? esc(m.name) : m.kind === "lay" ? "lay" : "?";
  const what = m.kind === "lay" ? `${who}: ${esc(m.card)} laid` : `${who} pressed`;
  const gap = m.kind === "press" && m.after_lay_us !== null ? ` ${micros(m.after_lay_us)}` : "";
  return (
    `<button type="button" class="mark ${m.kind}" data-i="${i}" data-t="${m.t}" data-seat="${m.seat ?? ""}"` +
    ` style="left:${(m.at * 100).toFixed(4)}%" title="${what}${gap}"><span>${who}</span></button>`
  );
}

function rowHtml(m, ruling) {
  if (m.kind === "lay") {
    const who = m.name ? `<b>${esc(m.name)}</b> laid` : "laid";
    return `<li class="lay">${who} ${esc(m.card)} <span class="us">${micros(m.t - ruling)} from the ruling</span></li>`;
  }
  const gap = m.after_lay_us !== null ? `${micros(m.after_lay_us)} after the lay` : "";
  const behind = m.after_first_us ? ` · ${micros(m.after_first_us)} behind the first` : "";
  return `<li class="press" data-seat="${m.seat ?? ""}"><b>${esc(m.name || "?")}</b> pressed <span class="us">${gap}${behind}</span></li>`;
}

function drawClip() {
  const c = replay.clip;
  if (!c) return;
  const n = c.frames.length;
  const f = c.frames[replay.k];
  const tl = c.timeline;
  const span = Math.max(1, tl.end - tl.start);
  const img = $("replay-img");
  if (f && img.getAttribute("src") !== f.src) img.src = f.src;
  img.hidden = !f;
  $("replay-cursor").style.left = f ? `${(((f.t - tl.start) / span) * 100).toFixed(4)}%` : "0";
  put(
    $("replay-pos"),
    n ? `frame ${replay.k + 1} of ${n} · ${micros(f.t - tl.ruling)} from the ruling` : "no frames were kept"
  );
  $("replay-first").disabled = $("replay-prev").disabled = replay.k <= 0;
  $("replay-last").disabled = $("replay-next").disabled = replay.k >= n - 1;
}

async function openReplay(game, t, title) {
  const box = $("replay");
  put($("replay-title"), esc(title));
  put($("replay-line"), `<div id="replay-cursor"></div>`);
  put($("replay-presses"), "");
  put($("replay-race"), "");
  put($("replay-pos"), "loading…");
  $("replay-img").hidden = true;
  replay.clip = null;
  box.hidden = false;
  let r;
  try {
    r = await fetch(`/api/replay/${game}/${t}.json`);
  } catch {
    put($("replay-pos"), "the table does not answer");
    return;
  }
  const out = await r.json().catch(() => ({}));
  if (!r.ok) {
    put($("replay-pos"), esc(out.error || `${r.status} ${r.statusText}`));
    return;
  }
  replay.clip = out;
  const marks = out.timeline.marks;
  put($("replay-line"), `<div id="replay-cursor"></div>` + marks.map(markHtml).join(""));
  // Listed: the presses, and the lays they answered (or the ruling's own lay, if none pressed).
  const presses = marks.filter((m) => m.kind === "press");
  const lays = marks.filter((m) => m.kind === "lay");
  const answered = (t) => lays.filter((l) => l.t <= t).pop();
  const keep = new Set(presses.length ? presses.map((p) => answered(p.t)) : [answered(out.timeline.ruling)]);
  const rows = marks.filter((m) => m.kind === "press" || keep.has(m));
  put($("replay-presses"), rows.map((m) => rowHtml(m, out.timeline.ruling)).join(""));
  put($("replay-race"), raceHtml(marks));
  $("replay-race").hidden = !$("replay-race").innerHTML;
  // Start at the frame of the ruling: the moment disputed.
  const at = out.frames.findIndex((f) => f.t >= out.timeline.ruling);
  replay.k = at < 0 ? Math.max(0, out.frames.length - 1) : at;
  drawClip();
}

function step(to) {
  const c = replay.clip;
  if (!c || !c.frames.length) return;
  replay.k = Math.max(0, Math.min(c.frames.length - 1, to));
  drawClip();
}

function closeReplay() {
  $("replay").hidden = true;
  replay.clip = null;
}

// The page's draw calls this with each view: the clips' stop (a full disk) is said once.
function replayView(v) {
  const stopped = v.replay && v.replay.stopped;
  if (stopped && stopped !== replay.told) {
    replay.told = stopped;
    const note = $("replay-note");
    put(note, esc(stopped));
    note.hidden = false;
    setTimeout(() => (note.hidden = true), 10000);
  }
}

function setUpReplay() {
  $("log").addEventListener("click", (e) => {
    const li = e.target.closest("li[data-replay]");
    const v = kiosk.view;
    if (!li || !v || !v.replay) return;
    const clock = li.querySelector(".t");
    const said = clock ? `${clock.textContent} ${li.textContent.slice(clock.textContent.length)}` : li.textContent;
    openReplay(v.replay.game, li.dataset.replay, said);
  });
  $("replay-first").onclick = () => step(0);
  $("replay-prev").onclick = () => step(replay.k - 1);
  $("replay-next").onclick = () => step(replay.k + 1);
  $("replay-last").onclick = () => step(Infinity);
  $("replay-close").onclick = closeReplay;
  $("replay-line").onclick = $("replay-race").onclick = (e) => {
    // A tap on a mark goes to the frame nearest its moment.
    const mark = e.target.closest(".mark");
    const c = replay.clip;
    if (!mark || !c) return;
    const t = Number(mark.dataset.t);
    let best = 0;
    c.frames.forEach((f, i) => {
      if (Math.abs(f.t - t) < Math.abs(c.frames[best].t - t)) best = i;
    });
    step(best);
  };
  document.addEventListener("keydown", (e) => {
    if ($("replay").hidden) return;
    if (e.key === "ArrowLeft") step(replay.k - 1);
    else if (e.key === "ArrowRight") step(replay.k + 1);
    else if (e.key === "Home") step(0);
    else if (e.key === "End") step(Infinity);
    else if (e.key === "Escape") closeReplay();
    else return;
    e.preventDefault();
  });
}

setUpReplay();
