// The game's kiosk page: each view from /events is drawn whole (live.js: $, esc, put, listen).
"use strict";

const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"];
const TOKEN_KEY = "referee-admin-token";

// When each version was drawn and first painted, on the wall clock (ms): the browser test
// and benchmarks/bench_kiosk.py read these. Bounded, like everything the page keeps.
const kiosk = (window.kiosk = { view: null, shown: [], painted: [] });
const KEEP = 2000;

let lastTop = null;
let lastSeq = null;
let winnerDismissed = false;
// The card picker: the camera's oldest question, or a lay the host tapped in the log to correct
// ({for, clock, card}); null: no correction open.
let fixing = null;
let askedFor = null; // the lay the picker was last drawn for: a new one clears the last answer
// A term of this game (view.game.terms) as a word a tap explains; plain text if the game has none.
function term(v, key, text) {
  const t = v.game.terms[key];
  const word = esc(text || (t ? t.word : key));
  return t ? `<button type="button" class="term" data-term="${esc(key)}">${word}</button>` : word;
}

function wallMs() {
  return performance.timeOrigin + performance.now();
}

function cardFace(card, i, n, fresh) {
  const left = `calc(${i} * var(--card-h) * 0.2)`;
  const tilt = (i - n + 1) * 2;
  const cls = ["card", card.red ? "red" : "", i === n - 1 ? "top" : "", fresh ? "fresh" : ""];
  const style = `left:${left};transform:rotate(${tilt}deg);z-index:${i}`;
  if (card.rank === "JOKER") {
    return `<div class="${cls.join(" ")} joker" style="${style}" title="JOKER"><div class="pip">JOKER</div></div>`;
  }
  const suit = SUITS[card.suit] || "";
  const corner = `${esc(card.rank)}<span>${suit}</span>`;
  return (
    `<div class="${cls.join(" ")}" style="${style}" title="${esc(card.symbol)}">` +
    `<div class="corner tl">${corner}</div><div class="pip">${suit}</div>` +
    `<div class="corner br">${corner}</div></div>`
  );
}

function drawPile(v) {
  const top = v.stack.top;
  const code = top.length ? top[top.length - 1].code : null;
  const fresh = code !== null && code !== lastTop;
  lastTop = code;
  const html = top.length
    ? top.map((c, i) => cardFace(c, i, top.length, fresh && i === top.length - 1)).join("")
    : `<div class="empty-stack">no stack</div>`;
  put($("cards"), html);
  const n = v.stack.size;
  const size = n ? `${n} card${n === 1 ? "" : "s"}` : "";
  // The penalty pile, in the games that have one (and whenever cards lie on it).
  const pp = v.stack.penalty_pile;
  const pile =
    v.game.penalty_pile || pp ? `<span class="pp">${term(v, "penalty_pile")}: ${pp}</span>` : "";
  put($("stack-size"), [size, pile].filter(Boolean).join(" · "));
}

function drawCall(v) {
  // NEXT CALL only where calling out counts: elsewhere whose turn and the challenge take its room.
  document.body.classList.toggle("no-calls", !v.game.calls);
  put($("call-rank"), esc(v.call.next_rank));
  let turn = "";
  if (v.winner) turn = "game over";
  else if (v.hold) turn = term(v, "hold", "HOLD");
  else if (v.turn) turn = `<span class="who">${esc(v.turn.name)}</span> to lay`;
  put($("turn"), turn);
  const box = $("count-out");
  if (v.hold && !v.winner) {
    const how = { counting_out: "takes it", challenge: "takes it (challenge)" }[v.hold.by] || "takes it (stall)";
    box.className = "hold";
    put(
      box,
      `first snap wins — else ${esc(v.hold.name)} ${how}`.replace("(challenge)", `(${term(v, "challenge")})`) +
        `<div class="drain" style="animation:drain ${v.hold.ms_left}ms linear forwards"></div>`
    );
  } else if (v.count_out) {
    box.className = "";
    const left = v.count_out.left;
    const dots = "●".repeat(Math.max(0, left));
    if (v.game.face_cards === "challenge") {
      // The challenge's chances left: the challenged seat (on turn) must lay a face card in them.
      const who = v.turn ? `${esc(v.turn.name)}: ` : "";
      const chances = `${left} chance${left === 1 ? "" : "s"} left`;
      put(
        box,
        `${esc(v.count_out.name)}'s ${term(v, "challenge")}` +
          `<div class="chances">${dots} <small>${who}${chances}</small></div>`
      );
    } else {
      put(
        box,
        `${esc(v.count_out.name)}'s ${term(v, "count_out")}` +
          `<div class="chances">${dots} <small>${left} to go</small></div>`
      );
    }
  } else {
    box.className = "";
    put(box, "");
  }
}

function drawLast(v) {
  const box = $("last");
  const last = v.last;
  // A card laid since: the ruling is old news (it stays in the log). Cleared, not left beside
  // a fresh stack.
  if (!last || last.stale) {
    box.className = "empty";
    put(box, "&nbsp;");
    return;
  }
  const award = last.event === "stack_won" && last.ruling.by !== "snap";
  const [said, margin] = last.text.split(" — ");
  const html = esc(said) + (margin ? ` <span class="margin">— ${esc(margin)}</span>` : "");
  // Said again after a restart, as in the log: it may not have gone out before the crash.
  put(box, html + (last.again ? ` <span class="tag again">announced again</span>` : ""));
  const cls = award ? "award" : last.event;
  if (last.seq !== lastSeq) {
    box.className = cls;
    void box.offsetWidth; // restart the flash for a new ruling
    box.className = `${cls} flash`;
    lastSeq = last.seq;
  }
}

function drawSeats(v) {
  const html = v.players
    .map((p) => {
      const tags = [];
      if (p.penalised) tags.push(`<span class="tag pen">${term(v, "penalised", "PENALISED")}</span>`);
      if (p.out) tags.push(`<span class="tag bad">OUT</span>`);
      if (p.count_owner) {
        const key = v.game.face_cards === "challenge" ? "challenge" : "count_out";
        tags.push(`<span class="tag own">${term(v, key)}</span>`);
      }
      if (p.trouble) tags.push(`<span class="tag bad">button ${({stuck: "stuck", chattering: "chatters", unplugged: "unplugged"})[p.trouble] || p.trouble}</span>`);
      const cls = ["seat", p.turn ? "turn" : "", p.penalised ? "penalised" : ""].join(" ");
      const led = `<div class="led${p.led.blink ? " blink" : ""}" style="--level:${p.led.level}" title="seat light"></div>`;
      return (
        `<div class="${cls}" data-seat="${p.seat}">${led}<div class="name">${esc(p.name)}</div>` +
        `<div class="count">${p.cards}</div><div class="tags">${tags.join("")}</div></div>`
      );
    })
    .join("");
  const seats = $("seats");
  seats.style.setProperty("--cols", v.players.length <= 4 ? v.players.length : Math.ceil(v.players.length / 2));
  seats.classList.toggle("many", v.players.length > 4);
  seats.classList.toggle("eight", v.players.length > 7);
  put(seats, html);
}

function drawLegend(v) {
  // The slaps that count in this game, and its other terms worth a tap.
  const slaps = v.game.slaps.map((s) => `<span class="chip">${term(v, s.key)}</span>`).join("");
  const more = ["count_out", "challenge", "wrong_snap", "penalty_pile"]
    .filter((k) => v.game.terms[k])
    .map((k) => `<span class="chip other">${term(v, k)}</span>`)
    .join(" · ");
  put($("legend"), `slaps: ${slaps}<br>${more}${houseLegend(v)}`); // houseLegend: phones.js
}

function drawLog(v) {
  // A lay can be tapped to correct its card (the host's token is asked when it is sent).
  const items = v.log
    .slice()
    .reverse()
    .map((e) => {
      const fix = e.event === "laid" ? ` data-for="${e.for}" data-card="${esc(e.card)}" title="tap to correct"` : "";
      // A dispute with a replay clip (replay.js opens it): anyone may watch it.
      const clip = v.replay && e.replay !== undefined ? ` data-replay="${e.replay}" title="tap to replay"` : "";
      // Said again after a restart: it may not have gone out before the crash.
      const again = e.again ? ` <span class="tag again">announced again</span>` : "";
      return `<li class="${e.event}${fix ? " fixable" : ""}${clip ? " replayable" : ""}"${fix}${clip}><span class="t">${esc(e.clock)}</span>${esc(e.text)}${again}</li>`;
    });
  put($("log").firstElementChild, items.join(""));
}

function symbol(code) {
  return code ? code.slice(0, -1) + (SUITS[code.slice(-1)] || "") : "";
}

function drawAsk(v) {
  const box = $("ask");
  const q = v.questions[0];
  const target = fixing || (q ? { for: q.for } : null);
  if (!target) {
    box.hidden = true;
    askedFor = null;
    return;
  }
  box.hidden = false;
  box.classList.toggle("fixing", Boolean(fixing));
  if (target.for !== askedFor) put($("ask-msg"), "");
  askedFor = target.for;
  let title;
  let mark;
  let crop = "";
  if (fixing) {
    title = `Correct the card laid at ${esc(fixing.clock)}: read as ${esc(symbol(fixing.card))}`;
    mark = fixing.card;
  } else {
    const who = q.name ? ` by ${esc(q.name)}` : "";
    const more = v.questions.length > 1 ? ` <small>(${v.questions.length - 1} more asked)</small>` : "";
    title = `Which card was laid at ${esc(q.clock)}${who}?${more}`;
    mark = q.guess ? q.guess.code : null;
    if (q.crop) crop = `<img src="${esc(q.crop)}" alt="the camera's picture of the card" onerror="this.hidden=true">`;
    if (q.guess) crop += `<div class="guess">camera: ${esc(q.guess.symbol)}?</div>`;
  }
  put($("ask-title"), title);
  put($("ask-crop"), crop);
  $("ask-crop").hidden = !crop;
  $("ask-cancel").hidden = !fixing;
  $("ask-none").textContent = fixing ? "No card was laid there" : "No card was laid";
  const cards = [];
  for (const suit of "SHDC") {
    for (const rank of RANKS) {
      const code = rank + suit;
      const cls = ["pick", suit === "H" || suit === "D" ? "red" : "", code === mark ? "guess" : ""].join(" ");
      cards.push(`<button type="button" class="${cls}" data-card="${code}">${rank}${SUITS[suit]}</button>`);
    }
  }
  put($("ask-cards"), cards.join(""));
}

function drawAlerts(v) {
  const banner = $("banner");
  const { paused, messages } = v.alerts;
  const lines = paused ? [`⏸ ${paused}`, ...messages] : messages;
  banner.hidden = lines.length === 0;
  banner.className = paused ? "" : "note";
  put(banner, lines.map(esc).join(" · "));
}

function drawBar(v) {
  const s = v.signals;
  let html = "";
  if (s.live) {
    const rgb = (s.status || [0, 0, 0]).map((x) => Math.round(x * 255)).join(",");
    html += `<span class="status-led" style="background:rgb(${rgb})" title="status light"></span> `;
    html += s.buzzer_hz ? `<span class="buzz">♪ ${Math.round(s.buzzer_hz)} Hz</span>` : `♪ —`;
  }
  put($("signals"), html);
  put($("rules"), `rules: ${esc(v.game.rules)}`);
  const select = $("admin-rules");
  put(select, v.game.presets.map((p) => `<option${p === v.game.rules ? " selected" : ""}>${esc(p)}</option>`).join(""));
}

function histogram(bins, edges) {
  // One bar per bin, below the first edge, between the edges, above the last.
  const top = Math.max(1, ...bins);
  const bars = bins.map((n, i) => `<i style="height:${(n / top) * 100}%" title="${n}"></i>`).join("");
  const mid = edges[Math.floor(edges.length / 2)];
  return (
    `<div class="hist" role="img" aria-label="reaction times">${bars}</div>` +
    `<div class="axis"><span>${edges[0]}</span><span>${mid}</span><span>${edges[edges.length - 1]} ms</span></div>`
  );
}

function drawWinner(v) {
  const box = $("winner");
  if (!v.winner) {
    winnerDismissed = false;
    box.hidden = true;
    return;
  }
  box.hidden = winnerDismissed;
  const panels = v.players.map((p, seat) => {
    const s = v.stats[seat];
    const chips = s.snaps_by_reason.map((r) => `<span class="chip">${esc(r.words)} ×${r.count}</span>`).join("");
    const react = s.reactions
      ? `median ${s.median_ms.toFixed(0)} · mean ${s.mean_ms.toFixed(0)} ms · ${s.reactions} presses`
      : "no timed presses";
    return (
      `<div class="stat${seat === v.winner.seat ? " won" : ""}">` +
      `<h2><span>${esc(p.name)}</span><span>${p.cards}</span></h2>` +
      `<div class="nums">snaps ${s.won_by.snap} · count-outs ${s.won_by.counting_out} · ` +
      `wrong ${s.wrong_snaps} · late ${s.late}</div>` +
      `<div class="reasons">${chips || "&nbsp;"}</div>` +
      histogram(s.reaction_bins, v.reaction_bin_edges_ms) +
      `<div class="nums">${react}</div></div>`
    );
  });
  box.classList.toggle("many", v.players.length > 4);
  const n = v.players.length;
  box.style.setProperty("--cols", n <= 4 ? n : Math.ceil(n / 2));
  put(
    box,
    `<h1>${esc(v.winner.name)} wins!</h1>` +
      `<p class="hint">${v.night && v.night.games.length ? "tap for tonight's scores" : "tap to see the table"}</p>` +
      `<div class="players">${panels.join("")}</div>`
  );
}

function draw(v) {
  kiosk.view = v;
  drawAlerts(v);
  drawPile(v);
  drawCall(v);
  drawLast(v);
  drawSeats(v);
  drawLegend(v);
  drawLog(v);
  drawBar(v);
  drawWinner(v);
  drawNight(v); // night.js: tonight's scores, after the winner screen
  drawAsk(v);
  drawSound(v); // phones.js
  if (window.replayView) replayView(v);
  document.body.dataset.version = v.version;
  const t = wallMs();
  kiosk.shown.push([v.version, t]);
  requestAnimationFrame(() => kiosk.painted.push([v.version, wallMs()]));
  if (kiosk.shown.length > KEEP) kiosk.shown.splice(0, KEEP / 2);
  if (kiosk.painted.length > KEEP) kiosk.painted.splice(0, KEEP / 2);
}

// Host controls: the admin token is asked for once and kept in this browser.

async function localToken() {
  try {
    const r = await fetch("/api/admin/token");
    return r.ok ? (await r.json()).token : null;
  } catch {
    return null;
  }
}

async function token() {
  let t = localStorage.getItem(TOKEN_KEY) || (await localToken());
  if (!t) t = (prompt("Admin token (shown on the table's own screen):") || "").trim();
  if (t) localStorage.setItem(TOKEN_KEY, t);
  return t;
}

function say(text) {
  put($("admin-msg"), esc(text));
}

// A host's command; `show` puts its answer (or its error) where the host is looking. True when done.
async function command(name, body, show = say) {
  const t = await token();
  if (!t) {
    show("no token given");
    return false;
  }
  let r;
  try {
    r = await fetch(`/api/admin/${name}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${t}` },
      body: JSON.stringify(body || {}),
    });
  } catch {
    show("the table does not answer");
    return false;
  }
  const out = await r.json().catch(() => ({}));
  if (r.status === 401 || r.status === 403) localStorage.removeItem(TOKEN_KEY);
  show(out.message || out.error || `${r.status} ${r.statusText}`);
  return r.ok;
}

function setUpPicker() {
  const box = $("ask");
  const show = (text) => put($("ask-msg"), esc(text));
  async function name(card) {
    const lay = fixing ? fixing.for : kiosk.view && kiosk.view.questions[0] && kiosk.view.questions[0].for;
    if (lay === undefined || lay === null) return;
    box.classList.add("busy");
    const done = await command("name-card", { for: lay, card }, show);
    box.classList.remove("busy");
    if (done && fixing && fixing.for === lay) {
      fixing = null; // the corrected game comes with the next view
      if (kiosk.view) drawAsk(kiosk.view);
    }
  }
  $("ask-cards").onclick = (e) => {
    const button = e.target.closest("button[data-card]");
    if (button) name(button.dataset.card);
  };
  $("ask-none").onclick = () => name(null);
  $("ask-cancel").onclick = () => {
    fixing = null;
    if (kiosk.view) drawAsk(kiosk.view);
  };
  $("log").onclick = (e) => {
    const li = e.target.closest("li[data-for]");
    if (!li) return;
    fixing = { for: Number(li.dataset.for), card: li.dataset.card, clock: li.querySelector(".t").textContent };
    if (kiosk.view) drawAsk(kiosk.view);
  };
}

function setUpAdmin() {
  const panel = $("admin");
  $("admin-open").onclick = () => {
    panel.hidden = false;
    const players = kiosk.view ? kiosk.view.players.map((p) => p.name).join(", ") : "";
    if (!$("admin-names").value) $("admin-names").value = players;
  };
  $("admin-close").onclick = () => {
    panel.hidden = true;
  };
  $("admin-forget").onclick = () => {
    localStorage.removeItem(TOKEN_KEY);
    say("token forgotten");
  };
  for (const button of panel.querySelectorAll("button[data-cmd]")) {
    button.onclick = () => {
      const cmd = button.dataset.cmd;
      if (cmd === "new-game" && !confirm("Start a new game?")) return;
      if (cmd === "rules") return command("rules", { preset: $("admin-rules").value });
      if (cmd === "names") return command("names", { names: $("admin-names").value.split(",") });
      return command(cmd);
    };
  }
  // A tap on a term explains it (and does nothing else: not a log correction, not the winner's).
  document.addEventListener(
    "click",
    (e) => {
      const button = e.target.closest(".term");
      if (!button || !kiosk.view) return;
      const t = kiosk.view.game.terms[button.dataset.term];
      if (!t) return;
      e.stopPropagation();
      put($("explain-word"), esc(t.word));
      put($("explain-text"), esc(t.text));
      $("explain").hidden = false;
    },
    true
  );
  $("explain").onclick = () => {
    $("explain").hidden = true;
  };
  $("winner").onclick = () => {
    winnerDismissed = true;
    $("winner").hidden = true;
  };
}

async function showLocalToken() {
  // Only the Pi's own screen (a loopback client) is given the token: show it there.
  const t = await localToken();
  if (t) {
    const el = $("local-token");
    put(el, `admin token: <b>${esc(t)}</b>`);
    el.hidden = false;
  }
}

setUpAdmin();
setUpPicker();
setUpPhones(); // phones.js: sound, the phones' QR code, house rules
listen(draw);
showLocalToken();
