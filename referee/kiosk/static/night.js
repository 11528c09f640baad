// The night's scores between games (view.night, from the journal: referee/scores.py). After a
// game is won the winner screen shows first; a tap on it, or NIGHT_AFTER_MS with no tap (the Pi's
// own screen is seldom touched), brings tonight's table; a tap on that shows the table again.
// kiosk.js draws everything else and calls drawNight(v) with every view.
"use strict";

const NIGHT_AFTER_MS = 20000;
const NIGHT_ROWS = 8; // more players than this: "and N more" (`referee stats` lists them all)
const nightState = { key: null, shown: false, dismissed: false, timer: null };

function nightOn(v) {
  return Boolean(v.winner && v.night && v.night.games.length);
}

function showNight() {
  nightState.shown = true;
  winnerDismissed = true; // kiosk.js's: the winner screen gives way
  $("winner").hidden = true;
  if (kiosk.view) drawNight(kiosk.view);
}

function nightMs(us) {
  return us >= 10000 ? `${(us / 1000).toFixed(0)} ms` : `${(us / 1000).toFixed(1)} ms`;
}

function nightBars(bins, edges) {
  // One bar per bin, as the winner screen's histogram: below the first edge ... above the last.
  const top = Math.max(1, ...bins);
  const bars = bins.map((n) => `<i style="height:${(n / top) * 100}%"></i>`).join("");
  const label = `reaction times from ${edges[0]} to ${edges[edges.length - 1]} ms`;
  return `<span class="bars" role="img" aria-label="${label}">${bars}</span>`;
}

function nightRecords(n) {
  const out = [];
  if (n.fastest) out.push(`fastest snap <b>${esc(n.fastest.name)}</b> ${nightMs(n.fastest.us)}`);
  if (n.closest) {
    const beat = n.closest.beat ? ` beat ${esc(n.closest.beat)}` : "";
    out.push(`closest race <b>${esc(n.closest.name)}</b>${beat} by ${nightMs(n.closest.us)}`);
  }
  const s = n.streaks;
  if (s.games && s.games.count > 1) out.push(`<b>${esc(s.games.name)}</b> ${s.games.count} games in a row`);
  if (s.stacks) out.push(`<b>${esc(s.stacks.name)}</b> ${s.stacks.count} stacks in a row`);
  return out.map((r) => `<span class="rec">${r}</span>`).join("");
}

function drawNight(v) {
  const box = $("night");
  if (!nightOn(v)) {
    clearTimeout(nightState.timer);
    Object.assign(nightState, { key: null, shown: false, dismissed: false, timer: null });
    box.hidden = true;
    return;
  }
  const n = v.night;
  const key = `${v.winner.seat}|${n.games.map((g) => `${g.game}:${g.status}`).join(",")}`;
  if (key !== nightState.key) {
    // A new time between games: the winner screen first, tonight's table after it.
    clearTimeout(nightState.timer);
    Object.assign(nightState, { key, shown: false, dismissed: false });
    nightState.timer = setTimeout(() => {
      if (!nightState.dismissed && !winnerDismissed) showNight();
    }, NIGHT_AFTER_MS);
  }
  const rows = n.players.slice(0, NIGHT_ROWS).map(
    (p, i) =>
      `<div class="nrow${i === 0 && p.won ? " lead" : ""}">` +
      `<span class="name"><b>${esc(p.name)}</b></span><span class="won">${p.won}</span>` +
      `<span class="stacks">${p.stacks}<small> ${p.by_snap}·${p.by_count_out}</small></span>` +
      `<span class="wrong">${p.wrong_snaps}</span>` +
      `<span class="best">${p.fastest_us === null ? "–" : nightMs(p.fastest_us)}</span>` +
      `<span class="react">${nightBars(p.reaction_bins, n.reaction_bin_edges_ms)}` +
      `<small>${p.median_ms === null ? "" : `${p.median_ms.toFixed(0)} ms`}</small></span></div>`
  );
  const more = n.players.length - NIGHT_ROWS;
  const games = n.games.length === 1 ? "1 game" : `${n.games.length} games`;
  put(
    box,
    `<h1>Tonight <small>${games}</small></h1>` +
      `<p class="records">${nightRecords(n)}</p>` +
      `<div class="ntable" style="--rows:${Math.min(n.players.length, NIGHT_ROWS)}">` +
      `<div class="nrow head"><span class="name">player</span><span class="won">won</span>` +
      `<span class="stacks">stacks <small>snap·count</small></span><span class="wrong">wrong</span>` +
      `<span class="best">fastest</span><span class="react">reaction times</span></div>` +
      rows.join("") +
      `</div>` +
      (more > 0 ? `<p class="more">and ${more} more: referee stats</p>` : "") +
      `<p class="hint">tap to see the table</p>`
  );
  box.hidden = !(nightState.shown && !nightState.dismissed);
}

$("winner").addEventListener("click", () => {
  if (kiosk.view && nightOn(kiosk.view) && !nightState.dismissed) showNight();
});
$("night").addEventListener("click", () => {
  nightState.dismissed = true;
  $("night").hidden = true;
});
