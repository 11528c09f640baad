// The calibration wizard's page: the steps, the prompt, the camera's preview and the answers
// (live.js: $, esc, put, listen). Answers go to /calibrate/answer naming the prompt they
// answer; the wizard drops an answer whose question has passed.
"use strict";

const MARKS = { todo: "○", current: "●", done: "✓", kept: "✓", skipped: "–", failed: "✗", stopped: "■" };
const PREVIEW_MS = 250; // a few frames a second: enough to see the hand and the card
const ENDS = { finished: "Calibrated", failed: "Stopped: a fault", stopped: "Stopped" };

// What the page has drawn and done, for the browser tests and the pictures' tool.
const wizard = (window.wizard = { view: null, steps: [], answers: [], previews: 0, previewSize: null });

let promptId = null;
let previewOn = false;
let loading = false;
let frameNo = 0;

function drawSteps(v) {
  const html = v.steps
    .map((s) => {
      const title = s.line ? ` title="${esc(s.line)}"` : "";
      const mark = MARKS[s.state] || "";
      return `<li class="step ${s.state}" data-step="${esc(s.name)}"${title}><span class="mark">${mark}</span>${esc(s.label)}</li>`;
    })
    .join("");
  put($("steps"), html);
  put($("title"), esc(v.title));
  if (v.step && !wizard.steps.includes(v.step)) wizard.steps.push(v.step);
}

function drawLights(p) {
  const box = $("lights");
  const lights = p && p.lights;
  box.hidden = !lights;
  if (!lights) return put(box, "");
  const seats = lights.seats
    .map((level, i) => `<span class="light"><span class="led" style="--level:${level}"></span>seat ${i + 1}</span>`)
    .join("");
  put(box, seats + (lights.tune ? `<span class="tune" title="the test tune">♪</span>` : ""));
}

function drawPrompt(v) {
  const p = v.prompt;
  put($("phase"), p && p.phase ? esc(p.phase) : "");
  const note = $("note");
  note.hidden = !(p && p.note);
  put(note, p && p.note ? esc(p.note) : "");
  put($("prompt"), p ? esc(p.text) : v.end ? "" : "Starting…");
  const bar = $("progress");
  const progress = p && p.progress;
  bar.hidden = !progress;
  if (progress) {
    const [n, of] = progress;
    bar.querySelector(".bar i").style.width = `${Math.min(100, (100 * (n - 1)) / of)}%`;
    put(bar.querySelector(".count"), `${n} of ${of}`);
  }
  const choices = p && !v.end ? p.choices : [];
  const fresh = put(
    $("choices"),
    choices.map((c) => `<button type="button" data-answer="${esc(c)}">${esc(c)}</button>`).join("")
  );
  if (p && p.id !== promptId) {
    promptId = p.id;
    put($("answer-msg"), "");
  }
  for (const button of $("choices").querySelectorAll("button")) {
    if (fresh) button.onclick = () => answer(promptId, button.dataset.answer);
    button.disabled = Boolean(p && p.answered);
  }
  drawLights(p);
}

function drawEnd(v) {
  const box = $("end");
  box.hidden = !v.end;
  $("banner").hidden = !(v.end && v.end.how !== "finished");
  // A finished wizard's last prompt (a step's own summary) gives way to the summary of all.
  $("ask").classList.toggle("finished", Boolean(v.end && v.end.how === "finished"));
  if (!v.end) return;
  box.className = v.end.how;
  const lines = v.steps.filter((s) => s.line).map((s) => `<li>${esc(s.line)}</li>`);
  // A fault is in the banner already: here, what it leaves.
  const text = v.end.how === "failed" ? "What was finished is kept: run the wizard again to go on." : v.end.text;
  put(box, `<h2>${ENDS[v.end.how] || ""}</h2>${esc(text)}${lines.length ? `<ul>${lines.join("")}</ul>` : ""}`);
  put($("banner"), esc(v.end.text));
  $("banner").className = v.end.how === "stopped" ? "note" : "";
  $("conn").textContent = "the wizard has ended";
}

function drawPreview(v) {
  const hasLights = Boolean(v.prompt && v.prompt.lights);
  $("preview").hidden = !v.preview && !hasLights;
  $("wizard").classList.toggle("no-preview", !v.preview && !hasLights);
  $("preview-img").hidden = !v.preview;
  previewOn = v.preview && !v.end;
  pollPreview();
}

function pollPreview() {
  if (!previewOn || loading) return;
  loading = true;
  frameNo += 1;
  $("preview-img").src = `/calibrate/preview.jpg?n=${frameNo}`;
}

function setUpPreview() {
  const img = $("preview-img");
  img.onload = () => {
    loading = false;
    wizard.previews += 1;
    wizard.previewSize = [img.naturalWidth, img.naturalHeight];
    setTimeout(pollPreview, PREVIEW_MS);
  };
  img.onerror = () => {
    // No frame yet (204), or the wizard has gone: try again while it shows a camera.
    loading = false;
    setTimeout(pollPreview, PREVIEW_MS);
  };
}

async function answer(id, text) {
  for (const button of $("choices").querySelectorAll("button")) button.disabled = true;
  let r;
  try {
    r = await fetch("/calibrate/answer", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ prompt: id, answer: text }),
    });
  } catch {
    return put($("answer-msg"), "the wizard does not answer");
  }
  const out = await r.json().catch(() => ({}));
  if (r.ok) return wizard.answers.push([id, text]);
  put($("answer-msg"), esc(out.error || `${r.status} ${r.statusText}`));
  const p = wizard.view && wizard.view.prompt;
  for (const button of $("choices").querySelectorAll("button")) button.disabled = Boolean(p && p.answered);
}

function draw(v) {
  wizard.view = v;
  drawSteps(v);
  drawPrompt(v);
  drawPreview(v);
  drawEnd(v);
  put($("mode"), esc(v.mode));
  document.body.dataset.version = v.version;
}

setUpPreview();
listen(draw);
