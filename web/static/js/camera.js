// The camera panel of a table page: the live picture (a JPEG refreshed in a loop), the
// camera status, and a reading held for a person: a mismatch the host fixes by tapping a
// die (value, colour, or "not a die") or by tapping where a die the camera missed lies
// (value and colour, then "Add this die"), or sends back for a re-throw; a roll the
// active player confirms; or a roll the camera is not sure of, whose unsure dice the
// active player answers with one tap each (their two likeliest values).
// The question is asked where the player looks: in the sticky banner at the top (#camera-ask,
// put back into the banner after every redraw), with a thumbnail of the photo and the dice
// read, to the active player and the host only; the others see nothing of it. No rules
// here: the server matches and the engine accepts or refuses.
(() => {
  "use strict";
  const panel = document.getElementById("camera");
  if (!panel) return;
  const tableId = panel.dataset.cameraTable;
  const statusEl = document.getElementById("camera-status");
  // the live region that says the camera's state in words: the host's own, else the line
  const saidEl = document.getElementById("camera-said") || statusEl;
  const noteEl = document.getElementById("camera-note");
  const noteAgeEl = document.getElementById("camera-note-age");
  const modeLine = document.getElementById("camera-mode-line");
  const picture = document.getElementById("camera-picture");
  const pictureView = document.getElementById("camera-view");
  const offNote = document.getElementById("camera-off");
  const held = document.getElementById("camera-held");
  const heldMessage = document.getElementById("held-message");
  const heldPicture = document.getElementById("held-picture");
  const heldDice = document.getElementById("held-dice");
  const fixBox = document.getElementById("held-fix");
  const heldMark = document.getElementById("held-mark");
  const addButton = fixBox.querySelector("[data-fix-add]");
  const removeButton = fixBox.querySelector("[data-fix-remove]");
  const toast = document.getElementById("toast");
  const OFFLINE = "Offline: the camera's state shows again when the table is back.";
  const COLOURS = ["white", "red", "yellow", "green", "blue", "orange", "purple", "black", "pink", "brown", "grey", "teal"];
  let current = null; // the last status body
  let chosenDie = null; // index of the held die being fixed
  let adding = null; // {x, y, value, colour}: a missed die being added (frame pixels)
  let frame = 0;
  let pickingDie = null; // the die of a roll to confirm whose value is being changed
  const live = document.getElementById("live");
  const ask = document.createElement("div");
  ask.className = "camera-ask";
  ask.id = "camera-ask";
  ask.hidden = true;
  ask.setAttribute("role", "region");
  ask.setAttribute("aria-label", "the camera's question");

  function capital(text) { return text ? text.charAt(0).toUpperCase() + text.slice(1) : text; }

  // the toast is table.js' too: a refusal it shows while these words do is listed under
  // them (its lines); the words stay until the player moves on (toast.js)
  function say(text) {
    if (!toast) return;
    const line = capital(text);
    toast.textContent = line;
    toast.dataset.lines = line;
    toast.className = "toast error";
  }

  async function post(path, body) {
    let response;
    try {
      response = await fetchWithin(`/api/tables/${tableId}/camera/${path}`, {
        method: "POST",
        credentials: "same-origin",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify(body || {}),
      });
    } catch (error) {
      // offline: the answer (a confirmed roll, a fix, a setting) did not get through; or
      // the Wi-Fi went silent: it may have, only the table's answer did not come back
      say(timedOut(error) ? "no answer from the table: this may or may not have been done; the camera's state shows which once the banner says live"
        : "not sent: the server cannot be reached. Nothing changed; try again when the banner says live");
      return {};
    }
    const data = await response.json().catch(() => ({}));
    if (!response.ok) say(data.message || "refused");
    poll();
    return data;
  }

  // -- the picture: the next frame is asked for when the last one arrived ---------------
  // fetched, then shown: a frame that is not there (404 for a moment after the host's
  // "Restart the camera", before the camera's first new frame) keeps the last picture on
  // screen, where the <img> pointed at it showed a broken image
  let pictureLoop = false; // a picture is asked for, or its next one waits
  async function nextPicture() {
    pictureLoop = Boolean(picture && current && current.enabled && current.attached);
    if (!pictureLoop) return; // started again by render once this table has the camera
    frame += 1;
    let shown = false;
    try {
      const response = await fetchWithin(`/t/${tableId}/camera.jpg?n=${frame}`, {credentials: "same-origin"});
      if (response.ok && !accessLost) shown = await showPicture(await response.blob());
    } catch (error) {
      // the server is out of reach, or did not answer in time (a silent Wi-Fi: without
      // the deadline the loop waited on it for minutes): the last picture stays, the next
      // try follows
    }
    setTimeout(nextPicture, shown ? 200 : 1000);
  }

  // the frame on the <img> once it decodes (one that does not stays off it); the frame it
  // replaces is let go
  async function showPicture(blob) {
    const url = URL.createObjectURL(blob);
    const loader = new Image();
    loader.src = url;
    try {
      await loader.decode();
    } catch (error) {
      URL.revokeObjectURL(url);
      return false;
    }
    const before = picture.src;
    picture.src = url;
    if (before.startsWith("blob:")) URL.revokeObjectURL(before);
    return true;
  }

  // -- status and the held reading ----------------------------------------------------
  function closeFix() {
    chosenDie = null;
    adding = null;
    fixBox.hidden = true;
    heldMark.hidden = true;
  }

  // -- "Use this roll" while a choice is open ------------------------------------------
  // a choice the roll closes for good is open (the banner's .banner-choice): the first tap
  // on "Use this roll" says so in the choice's words, a second applies the roll
  // (tap_again.js, with its guard against a finger's double tap). Its question is the
  // buttons' data-ask-first (the banner's and the panel's), "" while no such choice is
  // open: kept by those words, it outlives the banner question's redraws and shows on both
  const useRoll = window.TapAgain.questions(document, null, "data-ask-first");

  function askUseRollFirst() {
    const choice = live && live.querySelector(".banner-choice[data-choice-closes]");
    const question = choice ? choice.dataset.choiceCloses : "";
    document.querySelectorAll("[data-camera-confirm]").forEach((button) => {
      button.dataset.askFirst = question;
    });
    useRoll.restore();
  }

  // whether this tap on a "Use this roll" applies the roll (not a question asked first)
  function usesRoll(button) {
    askUseRollFirst();
    return useRoll.confirmed(button);
  }

  // -- the question in the banner ----------------------------------------------------
  function keepAskInBanner() {
    const banner = live && live.querySelector(".banner");
    if (banner && ask.parentNode !== banner) banner.appendChild(ask);
  }
  // the live fragment is redrawn with every state: the question goes back into the new
  // banner, and "Use this roll" asks first while (only while) the new one holds a choice
  if (live) new MutationObserver(() => { keepAskInBanner(); askUseRollFirst(); }).observe(live, {childList: true});

  // a die of the question: its value, and under it its colour as `name` shows it ("white
  // (2nd)" where two are white); the title says which die in words. Its data: the colour
  // and value read (not data-colour/-value: those mark the roll the banner shows)
  function chip(die, name, extra) {
    const el = document.createElement(extra && extra.button ? "button" : "span");
    if (extra && extra.button) el.type = "button";
    el.className = `die small c-${die.colour || "other"}` + (extra && extra.cls ? ` ${extra.cls}` : "");
    el.dataset.readColour = die.colour || "";
    el.dataset.readValue = String(die.value || "");
    el.innerHTML = "<b></b><i></i>";
    el.querySelector("b").textContent = die.value || "?";
    el.querySelector("i").textContent = name.shown;
    el.title = reads(name, die);
    return el;
  }

  // `label`: the button as a screen reader says it ("red die: change to 5"): its text
  // alone is a bare number
  function valueButton(index, value, colour, label) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = `ask-value c-${colour || "other"}`;
    b.dataset.askDie = String(index);
    b.dataset.askValue = String(value);
    b.textContent = String(value);
    b.setAttribute("aria-label", label);
    return b;
  }

  const ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth"];
  const SHORT_ORDINALS = ["1st", "2nd", "3rd", "4th", "5th", "6th"];

  // each die's names, by index, counted in the order shown: `spoken` for a screen reader
  // and the fix dialog ("red die", or where several share a colour "the second white
  // die"), `shown` on its chip ("red", "white (2nd)"). One count gives both, so the chip
  // and what is said never disagree. A die's index is where the finder met it on the
  // photo: "Die 3" or "red 3" named no die a player can see
  function dieNames(dice) {
    const total = new Map();
    dice.forEach((die) => total.set(die.colour, (total.get(die.colour) || 0) + 1));
    const seen = new Map();
    const names = new Map();
    dice.forEach((die) => {
      const nth = (seen.get(die.colour) || 0) + 1;
      seen.set(die.colour, nth);
      const shared = total.get(die.colour) > 1;
      const kind = die.colour ? `${die.colour} die` : "die";
      const ordinal = ORDINALS[nth - 1] || `number ${nth}`;
      const short = SHORT_ORDINALS[nth - 1] || `${nth}th`;
      names.set(die.index, {
        spoken: shared ? `the ${ordinal} ${kind}` : kind,
        shown: (die.colour || "?") + (shared ? ` (${short})` : ""),
      });
    });
    return names;
  }

  // "the second white die (reads 3)": which die, and what the camera read on it
  function reads(name, die) { return `${name.spoken} (reads ${die.value || "?"})`; }

  // `answeredBy`: whom the question waits for, by name (the server's answered_by)
  function askText(pending, viewer, answeredBy) {
    const implies = (pending.implies || []).join("; ");  // one part a player: "Ann: Pass (no cross), −5 penalty; Bob: ..."
    const first = implies ? implies + "; then: " : "";
    if (pending.kind === "mismatch") {
      return "Camera: " + pending.message + (viewer.may_fix_values ? " (fix it on the picture below)" : ` (${answeredBy.join(" or ")} fixes it)`);
    }
    if (pending.kind === "unsure") {
      const n = pending.unsure.length;
      return first + `The camera is not sure of ${n === 1 ? "one die" : n + " dice"}: tap the value ${n === 1 ? "it shows" : "each shows"}`;
    }
    // the question goes to the player whose step is open, who may not have thrown: it
    // names the dice, never a thrower
    const values = (pending.roll || []).map(([, value]) => value).join(" ");
    return first + `The camera read ${values}: is that the roll?`;
  }

  // who gets the question, and what each tap may do, is the server's word (the viewer's
  // may_* flags: the checks its routes make)
  function showAsk(pending, viewer) {
    if (!pending || !viewer.may_act) { ask.hidden = true; ask.dataset.key = ""; pickingDie = null; return; }
    if (ask.dataset.reading !== pending.id) { ask.dataset.reading = pending.id; pickingDie = null; }
    const key = `${pending.id}:${JSON.stringify(pending.dice.map((d) => [d.colour, d.value]))}:${pending.kind}:${JSON.stringify(pending.unsure)}:${pickingDie}`;
    keepAskInBanner();
    ask.hidden = false;
    ask.dataset.kind = pending.kind;
    if (ask.dataset.key === key) return;
    ask.dataset.key = key;
    // the question as drawn: a confirm sends exactly this id and these dice, so the server
    // never applies dice the person did not see
    ask.dataset.reading = pending.id;
    ask.dataset.roll = JSON.stringify(pending.roll || []);
    const refocus = focusAfterRedraw();
    ask.innerHTML = "";
    const thumb = document.createElement("button");
    thumb.type = "button";
    thumb.className = "ask-thumb";
    thumb.dataset.askShow = "";
    thumb.setAttribute("aria-label", "show the camera's photo");
    const img = document.createElement("img");
    img.alt = "the camera's photo of the roll";
    // a new reading (or a fixed one) gets a new address: the browser fetches it again
    const pictureKey = `${pending.id}:${pending.dice.map((d) => `${d.colour}${d.value}`).join(",")}:${pending.message}`;
    img.src = `/t/${tableId}/camera/held.jpg?thumb=true&id=${encodeURIComponent(pictureKey)}`;
    thumb.appendChild(img);
    ask.appendChild(thumb);
    const body = document.createElement("div");
    body.className = "ask-body";
    const text = document.createElement("p");
    text.className = "ask-text";
    text.textContent = askText(pending, viewer, (current && current.answered_by) || []);
    body.appendChild(text);
    if (pending.kind !== "mismatch") body.appendChild(askDice(pending));
    // "Use this roll" where the server accepts this reading as read from this device
    if (viewer.may_confirm) {
      const fix = document.createElement("p");
      fix.className = "ask-hint";
      fix.textContent = "A die read wrong? Tap it, then its value; fix each, then use the roll.";
      body.appendChild(fix);
      const use = document.createElement("button");
      use.type = "button";
      use.className = "primary big";
      use.dataset.cameraConfirm = "";
      use.textContent = "Use this roll";
      body.appendChild(use);
    }
    ask.appendChild(body);
    askUseRollFirst(); // a question it asked stays on the new button
    const again = refocus && ask.querySelector(refocus);
    if (again) again.focus();
  }

  // the control of the question that has the focus, to give it back after a redraw (the
  // redraw removes it: the focus fell to the page's top); for a value just chosen, the die
  // it changed (its values close with the answer)
  function focusAfterRedraw() {
    const el = document.activeElement;
    if (!el || !ask.contains(el)) return null;
    if (el.dataset.askValue) return `[data-ask-pick="${el.dataset.askDie}"]`;
    if (el.dataset.askPick !== undefined) return `[data-ask-pick="${el.dataset.askPick}"]`;
    if (el.hasAttribute("data-camera-confirm")) return "[data-camera-confirm]";
    return el.hasAttribute("data-ask-show") ? "[data-ask-show]" : null;
  }

  // the dice as the banner shows every roll (the game's order: white, white, red, ...),
  // not in the order the finder met them on the photo; dice of one colour from left to
  // right on the photo, so "the first white die" is the one further left. Each keeps its
  // index for answers
  function inGameOrder(dice) {
    const order = (current && current.expects) || [];
    const rank = (die) => (order.includes(die.colour) ? order.indexOf(die.colour) : order.length);
    const left = (die) => (die.box ? die.box[0] + die.box[2] : 0); // twice its centre's x
    return [...dice].sort((a, b) => rank(a) - rank(b) || left(a) - left(b));
  }

  // the dice read: an unsure die shows its two likeliest values as buttons (one tap
  // answers it); in a roll to confirm a tap on a die offers its six values
  function askDice(pending) {
    const row = document.createElement("div");
    row.className = "ask-dice";
    const unsure = new Map((pending.unsure || []).map((u) => [u.index, u.choices]));
    const shown = inGameOrder(pending.dice);
    const names = dieNames(shown);
    shown.forEach((die) => {
      const name = names.get(die.index);
      const cell = document.createElement("span");
      cell.className = "ask-die";
      cell.dataset.askIndex = String(die.index);
      const choices = unsure.get(die.index);
      if (choices) {
        cell.classList.add("unsure");
        cell.appendChild(chip(die, name, {cls: "unsure"}));
        choices.forEach((v) => cell.appendChild(valueButton(die.index, v, die.colour, `${name.spoken} shows ${v}`)));
      } else if (pending.kind === "confirm") {
        const face = chip(die, name, {button: true});
        face.dataset.askPick = String(die.index);
        face.setAttribute("aria-expanded", pickingDie === die.index ? "true" : "false");
        if (pickingDie === die.index) cell.classList.add("picking");
        face.setAttribute("aria-label", `change ${reads(name, die)}`);
        cell.appendChild(face);
        if (pickingDie === die.index) {
          for (let v = 1; v <= 6; v += 1) {
            if (v !== die.value) cell.appendChild(valueButton(die.index, v, die.colour, `${name.spoken}: change to ${v}`));
          }
        }
      } else {
        cell.appendChild(chip(die, name));
      }
      row.appendChild(cell);
    });
    return row;
  }

  function showHeld(pending, viewer) {
    showAsk(pending, viewer);
    // players who can't act on the camera's question don't get it on their sheet
    if (!pending || !viewer.may_act) {
      held.hidden = true; held.dataset.heldId = ""; closeFix(); return;
    }
    held.hidden = false;
    held.dataset.heldKind = pending.kind;
    heldDice.dataset.addable = viewer.may_add_dice ? "yes" : "no";
    // a fixed value redraws the picture too (a roll to confirm keeps its message)
    const readDice = pending.dice.map((d) => `${d.colour}${d.value}`).join(",");
    const key = `${pending.id}:${readDice}:${pending.message}`;
    const fresh = held.dataset.heldId !== key;
    held.dataset.heldId = key;
    held.dataset.reading = pending.id; // what the panel's "Use this roll" confirms
    held.dataset.roll = JSON.stringify(pending.roll || []);
    if (pending.kind === "confirm" || pending.kind === "unsure") {
      const dice = pending.roll.map(([c, v]) => `${c} ${v}`).join(", ");
      // the moves the throw implies first (the engine's Turn.on_throw, e.g. Sixto's re-roll)
      const implies = pending.implies || [];
      heldMessage.textContent = (implies.length ? implies.join("; ") + "; then roll: " : "The camera read: ") + dice +
        (viewer.may_fix_values ? " (tap a die read wrong to fix it)" : "");
    } else {
      heldMessage.textContent = "Not applied: " + pending.message +
        (viewer.may_add_dice ? " (tap a die to fix it, or the place of a die the camera missed to add it)" : "");
    }
    if (fresh) {
      if (adding) closeFix(); // the added die is in the new reading: tap it to change it
      heldPicture.src = `/t/${tableId}/camera/held.jpg?id=${encodeURIComponent(held.dataset.heldId)}`;
      drawSpots(pending, viewer);
    }
    nameHeldDice(pending);
    panel.querySelector("[data-camera-confirm]").hidden = !viewer.may_confirm;
    panel.querySelector("[data-camera-rethrow]").hidden = !viewer.may_rethrow;
  }

  // a tappable spot over each held die on the picture, reached with Tab in the banner's
  // order ("the first white die" before "the second"), not the order the finder met them
  function drawSpots(pending, viewer) {
    heldDice.innerHTML = "";
    inGameOrder(pending.dice).forEach((die) => {
      const [x0, y0, x1, y1] = die.box;
      const spot = document.createElement("button");
      spot.type = "button";
      spot.className = "held-die";
      spot.dataset.heldDie = String(die.index);
      spot.style.left = `${(100 * x0) / pending.width}%`;
      spot.style.top = `${(100 * y0) / pending.height}%`;
      spot.style.width = `${(100 * (x1 - x0)) / pending.width}%`;
      spot.style.height = `${(100 * (y1 - y0)) / pending.height}%`;
      // who may tap a die is the server's word (may_fix_values): the same dice the
      // banner's question fixes
      spot.disabled = !viewer.may_fix_values;
      heldDice.appendChild(spot);
    });
  }

  // a held die in words as the banner names it: "the second white die (reads 3)"
  function heldDieWords(pending, die) {
    return reads(dieNames(inGameOrder(pending.dice)).get(die.index), die);
  }

  // the spots and an open fix dialog name their die anew on every status: a fixed value or
  // colour renames it (a spot is redrawn only for a new reading)
  function nameHeldDice(pending) {
    heldDice.querySelectorAll("[data-held-die]").forEach((spot) => {
      const die = pending.dice[Number(spot.dataset.heldDie)];
      if (die) spot.setAttribute("aria-label", heldDieWords(pending, die));
    });
    const fixing = !fixBox.hidden && fixBox.dataset.fixMode === "fix" && chosenDie !== null;
    const die = fixing && pending.dice[chosenDie];
    if (die) document.getElementById("fix-which").textContent = capital(heldDieWords(pending, die));
  }

  // what the camera's setup learnt: confirmed dice, the share of the last hour's camera
  // rolls with the setup (every game's) that went in without a tap, and what it reads with and why; or why it learns
  // nothing at this table (no calibration; the table's dice are not the calibrated set)
  // A finished game the camera serves no more keeps the link to what it taught the
  // camera (`taught_setup`: read only there), without the learning line.
  function showLearning(learning, attached, taughtSetup) {
    const el = document.getElementById("camera-learning");
    const link = document.getElementById("camera-setup-item"); // the link and its " · "
    if (!el) return;
    el.hidden = !learning || !attached;
    if (link) link.hidden = (el.hidden || learning.setup === null) && !taughtSetup;
    if (el.hidden) return;
    el.dataset.teaches = String(Boolean(learning.teaches));
    if (!learning.teaches) {
      el.dataset.learnt = "";
      el.textContent = learning.why;
      el.title = "";
      return;
    }
    const learnt = learning.learnt === null ? "…" : learning.learnt;
    el.dataset.learnt = String(learning.learnt ?? "");
    el.textContent = `The camera learnt from ${learnt} confirmed dice (setup “${learning.setup}”)` +
      ` · ${learning.rolls_words}` +
      (learning.reads ? ` · ${learning.reads}` : "");
    el.title = (learning.reads_details || []).join("\n");
  }

  // the demo camera throws, and a recording (a video, a folder of photos) plays, once
  // every seat is taken (or the host starts it sooner)
  function showSeatWait(names, source) {
    const box = document.getElementById("camera-seat-wait");
    if (!box) return;
    box.hidden = names.length === 0;
    const list = names.length > 1 ? names.slice(0, -1).join(", ") + " and " + names[names.length - 1] : names.join("");
    const what = source === "demo camera" ? "The demo camera throws" : "The camera's recording plays";
    document.getElementById("camera-seat-wait-words").textContent =
      `${what} once everyone has a seat: waiting for ${list}.`;
  }

  // a player's line: the camera's state, and which source plays when the server chose it
  // (the demo camera in a webcam's place: "No webcam answered at start: ...")
  function inWords(body) {
    const words = stateInWords(body);
    const why = body.enabled && body.attached && !body.finished && body.source_why;
    return why ? `${words} ${capital(why)}.` : words;
  }

  // whom the camera's question waits for is the server's word: this device
  // (viewer.may_answer), else those named in answered_by ("Ann", "the host"); the kind
  // says only what the question is (dice to fix, or a roll to check)
  function waitsForAnswer(body) {
    const fixing = body.pending.kind === "mismatch";
    if (body.viewer && body.viewer.may_answer) {
      return fixing ? "The camera waits for you to fix the dice it read (on its picture below)."
        : "The camera asks you whether it read the roll right (its question is above).";
    }
    const who = (body.answered_by || []).join(" or ");
    return fixing ? `The camera waits for ${who} to fix the dice it read.`
      : `The camera asks ${who} whether it read the roll right, and waits for the answer.`;
  }

  // the camera is lost (a webcam unplugged, a folder gone): a player read only "the host's
  // screen says what", which told them neither whether to act nor how rolls get in now
  function cameraLost(body) {
    if (body.viewer && body.viewer.host) return "The camera has a problem (its line above says what): enter rolls by tapping the dice meanwhile.";
    return "The camera is not working just now. You need not do anything about it: the host's screen shows why. "
      + "Until it works again, whoever rolls taps the dice they threw on their own screen (the host can enter them too).";
  }

  function stateInWords(body) {
    if (!body.enabled) return "No camera at this table: rolls are entered by tapping the dice.";
    if (body.finished) return "The game is over: the camera reads no more rolls for it.";
    if (body.error || (body.status && !body.status.connected && body.status.last_error)) return cameraLost(body);
    // the notice at the top says so already, and how the camera comes here (elsewhere)
    if (!body.attached) return body.elsewhere ? "" : "The camera watches another table.";
    if (body.pending) return waitsForAnswer(body);
    if ((body.waits_for_seats || []).length) return "The camera waits until everyone has a seat.";
    // a video or folder played to its end reads nothing more until the host restarts it
    if (body.status && body.status.ended) return "The camera's recording has ended: enter rolls by tapping the dice (the host may restart it).";
    // only while the game waits for a roll: while players choose or cross a throw would
    // still mean something (a re-roll, their passes), but nobody waits for one
    if (body.roll_due) return "The camera is watching for the next roll.";
    return "The camera is on; it waits while players act.";
  }

  function render(body) {
    if (accessLost) return; // an answer that was on its way when the table refused us
    current = body;
    panel.hidden = !body.enabled && panel.dataset.cameraMode === "sheet";
    panel.dataset.cameraAttached = body.attached ? "yes" : "no";
    // the button says whether this table has the camera now, and when another table
    // holds it (a host off the server machine would be refused) what taking it back needs
    const attach = panel.querySelector("[data-camera-attach]");
    if (attach) {
      const refused = !body.attached && body.take_back_refused;
      attach.textContent = body.attached ? "This table gets the camera's rolls"
        : refused ? capital(body.take_back_refused)
        : "Use the camera at this table (it serves another table now)";
      attach.disabled = Boolean(body.attached || refused);
    }
    const state = !body.enabled ? "off" : body.status && body.status.connected ? "live" : body.error ? "fault" : "waiting";
    statusEl.dataset.cameraState = state;
    let line = body.line;
    // a finished game's line says the camera reads no more for it: not again in other words
    // not under the notice at the top, which says it in words (body.elsewhere)
    if (body.enabled && !body.attached && !body.finished && !body.elsewhere) line += " · this table does not get camera rolls";
    if (body.enabled && body.attached && body.expects) {
      const implies = body.implies || [];
      line += " · expects " + body.expects.join(", ") + (implies.length ? " (a new throw means: " + implies.join("; ") + ")" : "");
    }
    // the host reads the technical line; a player the camera's state in words
    if (body.viewer && body.viewer.host) statusEl.textContent = line;
    sayState(inWords(body));
    // no camera: no picture box (it would stay empty), a note on how rolls get in instead;
    // nor at a table the camera does not serve (its picture is another table's game)
    if (pictureView) pictureView.hidden = !body.enabled || !body.attached;
    if (offNote) offNote.hidden = !!body.enabled;
    noteEl.textContent = body.note || "";
    // an old note says it is old (the server's clock: a tablet's may differ)
    if (noteAgeEl) noteAgeEl.textContent = body.note ? noteAge(body.note_age_s) : "";
    if (modeLine) {
      // said only at the table whose rolls the camera reads, until the game is over
      modeLine.textContent = body.mode_line || "";
      modeLine.hidden = !body.mode_line;
    }
    showSeatWait(body.waits_for_seats || [], body.source);
    showElsewhere(body.elsewhere);
    if (body.last_roll) noteEl.dataset.lastRoll = body.last_roll.map(([c, v]) => `${c}:${v}`).join(",");
    showHeld(body.pending, body.viewer);
    showLearning(body.learning, body.attached, body.taught_setup);
    // "sure" with models that name no threshold asks about every die: said at the choice
    const sureNone = document.getElementById("camera-sure-none");
    if (sureNone) sureNone.hidden = !(body.enabled && body.sure_threshold === null);
    panel.querySelectorAll("input[name=camera-mode]").forEach((radio) => {
      radio.checked = radio.value === body.mode;
    });
    if (!pictureLoop && body.enabled && body.attached) nextPicture();
  }

  // the server cannot be reached: the last state read may be stale, so the line claims
  // nothing about the camera (a tablet said "The camera is watching for the next roll."
  // with the server stopped); the next answer draws it again
  function showOffline() {
    statusEl.dataset.cameraState = "offline";
    if (saidEl !== statusEl) statusEl.textContent = OFFLINE;
    sayState(OFFLINE);
    if (modeLine) modeLine.hidden = true;
  }

  // a live region is read out at every write: the words go in only when they change
  // another table keeps the camera: how rolls get in meanwhile and how the camera comes
  // here, the server's words, at the top of the page (camera_hub.serves_elsewhere)
  function showElsewhere(words) {
    const elsewhereEl = document.getElementById("camera-elsewhere");
    if (!elsewhereEl) return;
    if (elsewhereEl.textContent !== (words || "")) elsewhereEl.textContent = words || "";
    elsewhereEl.hidden = !words;
  }

  function sayState(words) {
    if (saidEl.textContent !== words) saidEl.textContent = words;
  }

  function noteAge(seconds) {
    if (!(seconds >= 60)) return "";
    const minutes = Math.round(seconds / 60);
    return minutes < 60 ? `(${minutes} min ago)` : `(${Math.round(minutes / 60)} h ago)`;
  }

  // one poll at a time: on a silent Wi-Fi each waits for its deadline, and polls piled up
  // behind it held every connection the browser allows the table (the socket's check too)
  let polling = false;

  async function poll() {
    if (accessLost || polling) return;
    polling = true;
    try {
      const response = await fetchWithin(`/api/tables/${tableId}/camera`, {credentials: "same-origin"});
      // an error answer (503 while the server is busy or going down) holds no camera state
      // either: the line claims nothing, as when no answer came; nothing else reads it
      if (response.ok) render(await response.json());
      else if (ACCESS_GONE.includes(response.status)) loseAccess();
      else showOffline();
    } catch (error) {
      showOffline(); // the next poll tries again
    } finally {
      polling = false;
    }
  }

  // the device lost the table (its seat freed, its join withdrawn: 401; the game deleted:
  // 404): nothing here may be read any more, so nothing is asked for again (it polled the
  // status every 0.7 s, and the picture, for as long as the page stayed open), and what
  // it showed goes: the picture, the camera's question, the held reading, whose answers
  // would be refused. table.js says so first when its socket is refused
  const ACCESS_GONE = [401, 404];
  let accessLost = false;
  let pollTimer = null;

  function loseAccess() {
    if (accessLost) return;
    accessLost = true;
    clearInterval(pollTimer);
    current = null; // the picture loop ends at its next turn
    closeFix();
    ask.hidden = true;
    held.hidden = true;
    panel.hidden = true;
    statusEl.dataset.cameraState = "lost";
    if (picture && picture.src.startsWith("blob:")) URL.revokeObjectURL(picture.src);
    if (picture) picture.removeAttribute("src");
  }

  document.addEventListener("table:access-lost", loseAccess);

  // -- the fix dialog: a tapped die, or a tapped empty spot (a missed die) ---------------
  // a value or colour button is named for what it does (a screen reader heard "1", "2"...
  // and not that it sets the tapped die); its visible label is part of the name
  function fixButtonName(mode, what) {
    return mode === "add" ? `The missed die ${/^\d$/.test(what) ? "shows" : "is"} ${what}` : `Set this die to ${what}`;
  }

  function openFix(which, colours, mode) {
    document.getElementById("fix-which").textContent = which;
    fixBox.querySelectorAll("[data-fix-value]").forEach((b) => b.setAttribute("aria-label", fixButtonName(mode, b.dataset.fixValue)));
    const box = document.getElementById("fix-colours");
    box.innerHTML = "";
    colours.forEach((colour) => {
      const b = document.createElement("button");
      b.type = "button";
      b.className = `small c-${colour}`;
      b.dataset.fixColour = colour;
      b.textContent = colour;
      b.setAttribute("aria-label", fixButtonName(mode, colour));
      box.appendChild(b);
    });
    box.parentElement.hidden = !colours.length;
    fixBox.dataset.fixMode = mode;
    removeButton.hidden = mode !== "fix";
    addButton.hidden = mode !== "add";
    showChoice();
    fixBox.hidden = false;
  }

  // in add mode value and colour are chosen first (marked pressed), then added in one step
  function showChoice() {
    fixBox.querySelectorAll("[data-fix-value], [data-fix-colour]").forEach((b) => {
      if (!adding) { b.removeAttribute("aria-pressed"); return; }
      const pressed = b.dataset.fixValue ? Number(b.dataset.fixValue) === adding.value : b.dataset.fixColour === adding.colour;
      b.setAttribute("aria-pressed", pressed ? "true" : "false");
    });
    addButton.disabled = !(adding && adding.value && adding.colour);
  }

  function gameColours() {
    // the colours this roll may show: the dice the game expects, kept dice included
    const kept = (current.kept || []).map(([colour]) => colour);
    const wanted = [...new Set([...(current.expects || []), ...kept])];
    return wanted.length ? wanted : COLOURS.slice(0, 5);
  }

  heldDice.addEventListener("click", (event) => {
    // a tap on the picture itself, not on a die: a die the camera missed lies there
    if (event.target !== heldDice || !current || !current.pending) return;
    const pending = current.pending;
    if (!current.viewer.may_add_dice) return;
    const rect = heldPicture.getBoundingClientRect();
    if (!rect.width || !rect.height) return;
    // the picture is shown scaled: the server wants the frame's own pixels
    const x = ((event.clientX - rect.left) * pending.width) / rect.width;
    const y = ((event.clientY - rect.top) * pending.height) / rect.height;
    if (x < 0 || y < 0 || x >= pending.width || y >= pending.height) return;
    chosenDie = null;
    const missing = pending.problems.find((p) => p.kind === "missing" && p.colour);
    adding = {x, y, value: null, colour: missing ? missing.colour : null};
    heldMark.style.left = `${(100 * x) / pending.width}%`;
    heldMark.style.top = `${(100 * y) / pending.height}%`;
    heldMark.hidden = false;
    openFix("A missed die here", gameColours(), "add");
  });

  // -- taps on the question in the banner ----------------------------------------------
  ask.addEventListener("click", (event) => {
    const target = event.target.closest("button");
    if (!target || !current || !current.pending) return;
    const pending = current.pending;
    if (target.dataset.askValue) {
      pickingDie = null;
      post("fix", {id: ask.dataset.reading, index: Number(target.dataset.askDie), value: Number(target.dataset.askValue)});
    } else if (target.dataset.askPick !== undefined) {
      const index = Number(target.dataset.askPick);
      pickingDie = pickingDie === index ? null : index;
      showAsk(pending, current.viewer);
    } else if (target.hasAttribute("data-camera-confirm")) {
      if (!usesRoll(target)) return;
      post("confirm", {id: ask.dataset.reading, roll: JSON.parse(ask.dataset.roll || "null")});
    } else if (target.hasAttribute("data-ask-show")) {
      held.scrollIntoView({behavior: "smooth", block: "center"});
    }
  });

  // -- taps ---------------------------------------------------------------------------
  panel.addEventListener("click", (event) => {
    const target = event.target.closest("button");
    if (!target || !current) return;
    const pending = current.pending;
    if (target.dataset.heldDie !== undefined && pending) {
      adding = null;
      heldMark.hidden = true;
      chosenDie = Number(target.dataset.heldDie);
      const die = pending.dice[chosenDie];
      const colours = [...new Set([...(current.expects || []), ...COLOURS.slice(0, 5)])];
      // a player answering a roll to confirm sets values only: colours and "not a die"
      // are offered where the server allows them (may_recolour_or_drop)
      const reshape = current.viewer.may_recolour_or_drop;
      openFix(capital(heldDieWords(pending, die)), reshape ? colours : [], reshape ? "fix" : "value");
    } else if (target.dataset.fixValue && adding) {
      adding.value = Number(target.dataset.fixValue);
      showChoice();
    } else if (target.dataset.fixColour && adding) {
      adding.colour = target.dataset.fixColour;
      showChoice();
    } else if (target.hasAttribute("data-fix-add") && pending && adding && adding.value && adding.colour) {
      const {x, y, value, colour} = adding;
      closeFix();
      post("fix", {id: pending.id, add: {x, y, value, colour}});
    } else if (target.dataset.fixValue && pending && chosenDie !== null) {
      post("fix", {id: pending.id, index: chosenDie, value: Number(target.dataset.fixValue)});
    } else if (target.dataset.fixColour && pending && chosenDie !== null) {
      post("fix", {id: pending.id, index: chosenDie, colour: target.dataset.fixColour});
    } else if (target.hasAttribute("data-fix-remove") && pending && chosenDie !== null) {
      post("fix", {id: pending.id, index: chosenDie, remove: true});
      closeFix();
    } else if (target.hasAttribute("data-camera-confirm") && pending) {
      if (!usesRoll(target)) return;
      post("confirm", {id: held.dataset.reading, roll: JSON.parse(held.dataset.roll || "null")});
    } else if (target.hasAttribute("data-camera-rethrow") && pending) {
      post("dismiss", {id: pending.id});
    } else if (target.hasAttribute("data-camera-attach")) {
      post("attach");
    } else if (target.hasAttribute("data-camera-start-now")) {
      post("start");
    } else if (target.hasAttribute("data-camera-restart")) {
      post("restart");
    }
  });
  panel.addEventListener("change", (event) => {
    if (event.target.name === "camera-mode") post("mode", {mode: event.target.value});
  });

  poll();
  pollTimer = setInterval(poll, 700);
})();
