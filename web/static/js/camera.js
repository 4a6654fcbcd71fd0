// The camera panel of a table page: the live picture (a JPEG refreshed in a loop), the
// camera status, and a reading held for a person: a mismatch the host fixes by tapping a
// die (value, colour, or "not a die") or sends back for a re-throw, or a roll the active
// player confirms. No rules here: the server matches and the engine accepts or refuses.
(() => {
  "use strict";
  const panel = document.getElementById("camera");
  if (!panel) return;
  const tableId = panel.dataset.cameraTable;
  const statusEl = document.getElementById("camera-status");
  const noteEl = document.getElementById("camera-note");
  const picture = document.getElementById("camera-picture");
  const pictureView = document.getElementById("camera-view");
  const offNote = document.getElementById("camera-off");
  const held = document.getElementById("camera-held");
  const heldMessage = document.getElementById("held-message");
  const heldPicture = document.getElementById("held-picture");
  const heldDice = document.getElementById("held-dice");
  const fixBox = document.getElementById("held-fix");
  const toast = document.getElementById("toast");
  const COLOURS = ["white", "red", "yellow", "green", "blue", "orange", "purple", "black", "pink", "brown", "grey", "teal"];
  let current = null; // the last status body
  let chosenDie = null; // index of the held die being fixed
  let frame = 0;

  function say(text) {
    if (!toast) return;
    toast.textContent = text ? text.charAt(0).toUpperCase() + text.slice(1) : text;
    toast.className = "toast error";
    toast.hidden = false;
    setTimeout(() => { toast.hidden = true; }, 4000);
  }

  async function post(path, body) {
    const response = await fetch(`/api/tables/${tableId}/camera/${path}`, {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify(body || {}),
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) say(data.message || "refused");
    poll();
    return data;
  }

  // -- the picture: the next frame is asked for when the last one arrived ---------------
  function nextPicture() {
    if (!picture || !current || !current.enabled) return;
    frame += 1;
    picture.src = `/t/${tableId}/camera.jpg?n=${frame}`;
  }
  if (picture) {
    picture.addEventListener("load", () => setTimeout(nextPicture, 200));
    picture.addEventListener("error", () => setTimeout(nextPicture, 1000));
  }

  // -- status and the held reading ----------------------------------------------------
  function showHeld(pending, viewer) {
    if (!pending) { held.hidden = true; held.dataset.heldId = ""; chosenDie = null; fixBox.hidden = true; return; }
    held.hidden = false;
    held.dataset.heldKind = pending.kind;
    const fresh = held.dataset.heldId !== pending.id + ":" + pending.message;
    held.dataset.heldId = pending.id + ":" + pending.message;
    if (pending.kind === "confirm") {
      const dice = pending.roll.map(([c, v]) => `${c} ${v}`).join(", ");
      heldMessage.textContent = (pending.reroll_first ? "Re-roll with these dice? " : "The camera read: ") + dice;
    } else {
      heldMessage.textContent = "Not applied: " + pending.message + (viewer.host ? " (tap a die to fix it)" : "");
    }
    if (fresh) {
      heldPicture.src = `/t/${tableId}/camera/held.jpg?id=${encodeURIComponent(held.dataset.heldId)}`;
      heldDice.innerHTML = "";
      pending.dice.forEach((die) => {
        const [x0, y0, x1, y1] = die.box;
        const spot = document.createElement("button");
        spot.type = "button";
        spot.className = "held-die";
        spot.dataset.heldDie = String(die.index);
        spot.setAttribute("aria-label", `die ${die.index + 1}: ${die.colour || "?"} ${die.value || "?"}`);
        spot.style.left = `${(100 * x0) / pending.width}%`;
        spot.style.top = `${(100 * y0) / pending.height}%`;
        spot.style.width = `${(100 * (x1 - x0)) / pending.width}%`;
        spot.style.height = `${(100 * (y1 - y0)) / pending.height}%`;
        spot.disabled = !(viewer.host && pending.kind === "mismatch");
        heldDice.appendChild(spot);
      });
    }
    panel.querySelector("[data-camera-confirm]").hidden = !(pending.kind === "confirm" && viewer.may_confirm);
    panel.querySelector("[data-camera-rethrow]").hidden = !viewer.host;
  }

  function render(body) {
    current = body;
    panel.hidden = !body.enabled && panel.dataset.cameraMode === "sheet";
    panel.dataset.cameraAttached = body.attached ? "yes" : "no";
    const state = !body.enabled ? "off" : body.status && body.status.connected ? "live" : body.error ? "fault" : "waiting";
    statusEl.dataset.cameraState = state;
    let line = body.line;
    if (body.enabled && !body.attached) line += " · this table does not get camera rolls";
    if (body.enabled && body.attached && body.expects) {
      line += " · expects " + body.expects.join(", ") + (body.reroll_step ? " (a new throw re-rolls)" : "");
    }
    statusEl.textContent = line;
    // no camera: no picture box (it would stay empty), a note on how rolls get in instead
    if (pictureView) pictureView.hidden = !body.enabled;
    if (offNote) offNote.hidden = !!body.enabled;
    noteEl.textContent = body.note || "";
    if (body.last_roll) noteEl.dataset.lastRoll = body.last_roll.map(([c, v]) => `${c}:${v}`).join(",");
    showHeld(body.pending, body.viewer);
    panel.querySelectorAll("input[name=camera-mode]").forEach((radio) => {
      radio.checked = radio.value === body.mode;
    });
    if (picture && !picture.src && body.enabled) nextPicture();
  }

  async function poll() {
    try {
      const response = await fetch(`/api/tables/${tableId}/camera`, {credentials: "same-origin"});
      if (response.ok) render(await response.json());
    } catch (error) { /* offline: the next poll tries again */ }
  }

  // -- taps ---------------------------------------------------------------------------
  panel.addEventListener("click", (event) => {
    const target = event.target.closest("button");
    if (!target || !current) return;
    const pending = current.pending;
    if (target.dataset.heldDie !== undefined && pending) {
      chosenDie = Number(target.dataset.heldDie);
      const die = pending.dice[chosenDie];
      document.getElementById("fix-which").textContent = `${chosenDie + 1} (${die.colour || "?"} ${die.value || "?"})`;
      const colours = document.getElementById("fix-colours");
      colours.innerHTML = "";
      const wanted = new Set([...(current.expects || []), ...COLOURS.slice(0, 5)]);
      wanted.forEach((colour) => {
        const b = document.createElement("button");
        b.type = "button";
        b.className = `small c-${colour}`;
        b.dataset.fixColour = colour;
        b.textContent = colour;
        colours.appendChild(b);
      });
      fixBox.hidden = false;
    } else if (target.dataset.fixValue && pending && chosenDie !== null) {
      post("fix", {id: pending.id, index: chosenDie, value: Number(target.dataset.fixValue)});
    } else if (target.dataset.fixColour && pending && chosenDie !== null) {
      post("fix", {id: pending.id, index: chosenDie, colour: target.dataset.fixColour});
    } else if (target.hasAttribute("data-fix-remove") && pending && chosenDie !== null) {
      post("fix", {id: pending.id, index: chosenDie, remove: true});
      chosenDie = null; fixBox.hidden = true;
    } else if (target.hasAttribute("data-camera-confirm") && pending) {
      post("confirm", {id: pending.id});
    } else if (target.hasAttribute("data-camera-rethrow") && pending) {
      post("dismiss", {id: pending.id});
    } else if (target.hasAttribute("data-camera-attach")) {
      post("attach");
    } else if (target.hasAttribute("data-camera-restart")) {
      post("restart");
    }
  });
  panel.addEventListener("change", (event) => {
    if (event.target.name === "camera-mode") post("mode", {mode: event.target.value});
  });

  poll();
  setInterval(poll, 700);
})();
