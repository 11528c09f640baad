// Phones, sound and house rules on the game's page (docs/kiosk.md): loaded before kiosk.js,
// which calls drawSound, houseLegend and setUpPhones; these call its command() for the host.
"use strict";

const SOUND_KEY = "referee-sound";
// What /api/screen says of this screen: the Pi's own or another, the sound's default, the
// phones' address. Never the token (the Pi's own screen asks /api/admin/token for that).
const screenInfo = { local: false, sound: false, watch: null };
const sound = { on: false, ctx: null, heard: null, until: 0, prio: -1, playing: [] };

function soundWanted() {
  const kept = localStorage.getItem(SOUND_KEY);
  return kept === null ? screenInfo.sound : kept === "on";
}

function drawSoundToggle() {
  const button = $("sound-toggle");
  button.textContent = sound.on ? "♪ sound on" : "♪ sound off";
  button.setAttribute("aria-pressed", String(sound.on));
  button.hidden = false;
}

function audio() {
  // Made (or woken) by a tap where the browser asks for one; the Pi's kiosk browser runs with
  // --autoplay-policy=no-user-gesture-required, so it plays without.
  if (!sound.ctx) {
    const Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) return null;
    sound.ctx = new Context();
  }
  if (sound.ctx.state === "suspended") sound.ctx.resume();
  return sound.ctx;
}

// One of the announcer's sounds: notes [hz or null, ms] from now, as the buzzer plays them.
// A sound takes over from one of its priority or lower; one of lower priority than the sound
// still playing is dropped (a late tick never cuts off the winner's chirp).
function play(s) {
  const ctx = audio();
  if (!ctx) return;
  const now = ctx.currentTime;
  if (now < sound.until && s.prio < sound.prio) return;
  for (const osc of sound.playing) {
    try {
      osc.stop(now);
    } catch {
      // already stopped
    }
  }
  sound.playing = [];
  let at = now;
  for (const [hz, ms] of s.notes) {
    const end = at + ms / 1000;
    if (hz) {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.type = "square"; // a piezo buzzer's timbre
      osc.frequency.setValueAtTime(hz, at);
      gain.gain.setValueAtTime(0.15, at);
      osc.connect(gain);
      gain.connect(ctx.destination);
      osc.start(at);
      osc.stop(end);
      sound.playing.push(osc);
    }
    at = end;
  }
  sound.until = at;
  sound.prio = s.prio;
}

// Each sound once, in order, from the first view on: a page opened (or reconnected) late does
// not play what was already heard at the table.
function drawSound(v) {
  const sounds = v.sounds || [];
  const newest = sounds.length ? sounds[sounds.length - 1].seq : 0;
  if (sound.heard === null) {
    sound.heard = newest;
    return;
  }
  for (const s of sounds) {
    if (s.seq > sound.heard && sound.on) play(s);
  }
  sound.heard = Math.max(sound.heard, newest);
}

// The legend's line of house rules: this game's, and the next game's when the host set others.
function houseLegend(v) {
  const h = v.house;
  if (!h) return "";
  const parts = [];
  if (h.now.length) parts.push(`house rules: ${h.now.map(esc).join(" · ")}`);
  if (h.next) {
    const words = h.next.words.length ? h.next.words.map(esc).join(" · ") : "no house rules";
    const rules = h.next.rules !== v.game.rules ? `${esc(h.next.rules)}, ` : "";
    parts.push(`next game: ${rules}${words}`);
  }
  return parts.length ? `<div class="house">${parts.join("<br>")}</div>` : "";
}

// The host's house rules: every option of the next game's preset, as toggles.
async function openHouse() {
  const box = $("house");
  let info;
  try {
    info = await (await fetch("/api/house-rules")).json();
  } catch {
    put($("admin-msg"), "the table does not answer");
    return;
  }
  const rows = Object.entries(info.kinds).map(([name, k]) => {
    const value = info.values[name];
    const label = esc(name.replace(/_/g, " "));
    let input;
    if (k.kind === "bool") {
      input = `<input type="checkbox" data-opt="${esc(name)}" data-kind="bool"${value ? " checked" : ""}>`;
    } else if (k.kind === "ms") {
      input = `<input type="number" min="0" max="60000" step="10" data-opt="${esc(name)}" data-kind="ms" value="${esc(value)}"> ms`;
    } else {
      const options = k.choices
        .map((c) => `<option value="${esc(c)}"${c === value ? " selected" : ""}>${esc(String(c).replace(/_/g, " "))}</option>`)
        .join("");
      input = `<select data-opt="${esc(name)}" data-kind="${k.kind}">${options}</select>`;
    }
    return `<label class="opt"><span>${label}</span>${input}</label>`;
  });
  put($("house-title"), `House rules for the next game (${esc(info.rules)})`);
  put($("house-options"), rows.join(""));
  put($("house-msg"), "");
  box.hidden = false;
}

function houseChoices() {
  const options = {};
  for (const el of $("house-options").querySelectorAll("[data-opt]")) {
    const kind = el.dataset.kind;
    if (kind === "bool") options[el.dataset.opt] = el.checked;
    else if (kind === "count" || kind === "ms") options[el.dataset.opt] = Number(el.value);
    else options[el.dataset.opt] = el.value;
  }
  return options;
}

async function showScreen() {
  try {
    const r = await fetch("/api/screen");
    if (r.ok) Object.assign(screenInfo, await r.json());
  } catch {
    // the defaults stand: no sound, no phones' address
  }
  sound.on = soundWanted();
  drawSoundToggle();
  if (screenInfo.watch) {
    $("phones-open").hidden = false;
    put($("phones-url"), esc(screenInfo.watch));
  }
}

function setUpPhones() {
  $("sound-toggle").onclick = () => {
    sound.on = !sound.on;
    localStorage.setItem(SOUND_KEY, sound.on ? "on" : "off");
    if (sound.on) audio(); // this tap lets the browser play
    drawSoundToggle();
  };
  $("phones-open").onclick = () => {
    $("phones-qr").src = "/api/watch.svg";
    $("phones").hidden = false;
  };
  $("phones").onclick = () => {
    $("phones").hidden = true;
  };
  $("house-open").onclick = () => openHouse();
  $("house-cancel").onclick = () => {
    $("house").hidden = true;
  };
  $("house-preset").onclick = async () => {
    if (await command("house-rules", { options: {} }, (t) => put($("house-msg"), esc(t)))) $("house").hidden = true;
  };
  $("house-save").onclick = async () => {
    const show = (t) => put($("house-msg"), esc(t));
    if (await command("house-rules", { options: houseChoices() }, show)) $("house").hidden = true;
  };
  showScreen();
}
