// Generic live table client: keeps the #live fragment in step with the server over a
// WebSocket, and turns taps into actions. No game rules here: a box's data-move holds the
// move JSON the server built; the server answers with the engine's acceptance or refusal.
(() => {
  "use strict";
  const page = document.querySelector("[data-table-id]");
  if (!page) return;
  const tableId = page.dataset.tableId;
  const mode = page.dataset.mode;
  const live = document.getElementById("live");
  const conn = document.getElementById("conn");
  const toast = document.getElementById("toast");
  let socket = null;
  let socketCount = 0; // which connection an action was last sent on
  let retryMs = 300;
  let retryTimer = null;
  let refusalShownAt = 0; // when the refusal toast showing now last got a line
  let connState = "connecting";
  // the server closed this screen because the history deleted its game (ws.py), and
  // whether the next game has no place for this device (its "Next game ready" would fail)
  let gameDeleted = false;
  let noPlaceNext = false;
  // action_id -> {kind, body, element, moveAttr, dice, sentOn, offline}: every action not
  // yet answered, in the order it was made. Kept in localStorage too, so a tap made while
  // the connection is down survives a reload; sent again on every reconnect with the same
  // action id (the server applies an id once, so a copy that got through is harmless)
  const pending = new Map();
  const outboxKey = `tc-outbox-${tableId}-${mode}`;
  const picks = {key: null, values: []}; // dice chosen in the roll entry
  // the toggles pressed before their move is sent (Sixis' dice to save), kept in this tab's
  // sessionStorage for the state they were pressed in: a reload or a redraw of that state
  // keeps them; a new state (the move sent, the turn moved on) forgets them
  const togglesKey = `tc-toggles-${tableId}-${mode}`;

  function stateId() {
    const el = live.querySelector(".live");
    return el ? Number(el.dataset.stateId) : null;
  }

  // the roll the screen shows (the banner's dice): a refusal of a tap made offline says
  // whether it was the roll that changed. Only the roll's own dice (they carry
  // data-colour): the camera's question sits in the banner too, and its chips come and go
  function diceShown() {
    return Array.from(live.querySelectorAll(".banner .die[data-colour]"), (d) => `${d.dataset.colour}${d.dataset.value}`).join(" ");
  }

  function newActionId() {
    const bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function capital(text) { return text ? text.charAt(0).toUpperCase() + text.slice(1) : text; }

  // the toast is a live region that stays (one that appears is not read by every screen
  // reader): shown by its words, hidden by taking them away
  function hideToast() { toast.textContent = ""; }

  function showToast(text, kind) {
    // engine sentences start lower-case (they read well inside other text); shown alone
    // they begin with a capital. Refusals arriving together (taps re-sent after a
    // reconnect) are listed together, not shown over one another.
    const line = capital(text);
    const stacking = toast.textContent !== "" && toast.classList.contains("error") && (kind || "error") === "error";
    const lines = stacking ? toast.dataset.lines.split("\n").concat(line).slice(-3) : [line];
    toast.dataset.lines = lines.join("\n");
    toast.textContent = lines.join("\n");
    toast.className = "toast " + (kind || "error");
    if ((kind || "error") === "error") refusalShownAt = Date.now();
    // no timer: the words stay until the player moves on (toast.js)
    return line;
  }

  // a refusal line another tab of this browser shows already (below): taken out of the list
  function withdrawLine(line) {
    if (toast.textContent === "" || !toast.classList.contains("error")) return;
    const lines = toast.dataset.lines.split("\n");
    const at = lines.indexOf(line);
    if (at < 0) return;
    lines.splice(at, 1);
    if (!lines.length) { hideToast(); return; }
    toast.dataset.lines = lines.join("\n");
    toast.textContent = lines.join("\n");
  }

  // a tap made after a refusal showed was accepted: the player has moved on, and the
  // refusal (listed with older ones) read as if it answered the tap just accepted. Taps
  // made before it (sent again together after a reconnect) leave it: it may be their news
  function clearRefusals(item) {
    if (toast.textContent === "" || !toast.classList.contains("error")) return;
    if (!item || !(item.madeAt > refusalShownAt)) return;
    hideToast();
  }

  // -- the connection state, in the sticky banner ---------------------------------------
  function waitingTaps() {
    return Array.from(pending.values()).filter((item) => item.sentOn !== socketCount || !isOpen()).length;
  }

  function connText() {
    if (connState === "live") return "live";
    if (connState === "refused") return refusedText() + keptUntilAnswered();
    if (connState === "outdated") return "Not connected: this page is out of date, reload it";
    const kept = waitingTaps();
    const taps = kept ? ` · ${kept} tap${kept > 1 ? "s" : ""} kept` : "";
    // nobody taps the scoreboard (a TV): it says what its watchers see instead
    if (connState === "offline" && document.body.classList.contains("page-board")) {
      return "Offline: the scores shown may be behind until the table is back";
    }
    if (connState === "offline") return `Offline: your taps will be sent when the table is back${taps}`;
    if (connState === "unreachable") return `No answer from the table: trying again${taps}`;
    return `connecting…${taps}`;
  }

  // a device whose access was lost still sends its kept taps (over HTTP, until the table
  // answers: the answer names each); said plainly, or the player took the tap for lost
  function keptUntilAnswered() {
    const kept = pending.size;
    if (!kept) return "";
    return kept > 1 ? ` · ${kept} taps kept: they will be sent when the table answers`
      : " · 1 tap kept: it will be sent when the table answers";
  }

  // a deleted game says so; where the next game kept this device's place its button
  // (still shown below) takes it there: a join code would only send the player astray
  function refusedText() {
    if (!gameDeleted) return "Not connected: enter the join code again";
    if (!noPlaceNext && live.querySelector("[data-next-seat]")) {
      return "This game was deleted from the history: your place in the next game is kept, tap \u201cNext game ready\u201d below";
    }
    return "This game was deleted from the history: ask the host for the next game's join code";
  }

  function setConn(state) {
    connState = state;
    showConn();
  }

  function showConn() {
    if (!conn) return;
    conn.dataset.conn = connState;
    // a live region is read out at every write, and this runs at every redraw: the words
    // and the role go in only when they change (a screen reader said "live" at every move)
    const words = connText();
    if (conn.textContent !== words) conn.textContent = words;
    const role = connState === "live" ? "status" : "alert";
    if (conn.getAttribute("role") !== role) conn.setAttribute("role", role);
    document.body.classList.toggle("conn-down", connState !== "live");
    // the banner is redrawn with every state: put the line back into the new one
    const banner = live.querySelector(".banner");
    if (banner && conn.parentNode !== banner) banner.prepend(conn);
  }

  function isOpen() { return Boolean(socket && socket.readyState === WebSocket.OPEN); }

  // a keyboard player's place survives the redraw: the new page had no focus (it went to
  // the page's top, and the next Tab started over from the top bar). The focused control is
  // found again by its path from #live, each step a tag, first class and index among its
  // like siblings (a redraw keeps those); a control gone or disabled (the box just crossed)
  // hands the focus to the next one after it
  function focusPath() {
    const active = document.activeElement;
    if (!active || active === live || !live.contains(active)) return null;
    const steps = [];
    for (let el = active; el !== live; el = el.parentElement) steps.unshift(stepOf(el));
    return steps;
  }

  function likeSiblings(parent, tag, cls) {
    return Array.from(parent.children).filter((s) => s.tagName === tag && (s.classList[0] || "") === cls);
  }

  function stepOf(el) {
    const cls = el.classList[0] || "";
    return [el.tagName, cls, likeSiblings(el.parentElement, el.tagName, cls).indexOf(el)];
  }

  const FOCUSABLE = "button:not(:disabled), a[href], input:not(:disabled), select, textarea, summary, [tabindex]:not([tabindex='-1'])";

  function refocus(steps) {
    if (!steps) return;
    let anchor = live;
    for (const [tag, cls, index] of steps) {
      const next = likeSiblings(anchor, tag, cls)[index];
      if (!next) break;
      anchor = next;
    }
    const target = Array.from(live.querySelectorAll(FOCUSABLE)).find((el) =>
      el.getClientRects().length && (el === anchor || anchor.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING));
    if (target) target.focus({preventScroll: true});
  }

  // a new roll is read out: the banner's dice are redrawn with the rest of #live, and a
  // screen reader reads a changed region only when the region itself stays. This one stays
  const announcer = document.createElement("p");
  announcer.id = "announce";
  announcer.className = "sr-only";
  announcer.setAttribute("aria-live", "polite");
  page.appendChild(announcer);

  function rollInWords() {
    return Array.from(live.querySelectorAll(".banner .die[data-colour]"), (d) =>
      `${d.dataset.colour} ${d.dataset.value}${d.classList.contains("out") ? " (locked)" : ""}`).join(", ");
  }

  let rollAnnounced = rollInWords(); // the roll the page opened with is not news

  // news: dice in other words, or a state reached by a roll (`advanced`: its dice may
  // equal the roll before, as Sixes' two dice shown between rolls do); not the dice an
  // undo brought back, rolled before (the undo's note says what happened). "" when none
  function rollNews(advanced) {
    const roll = rollInWords();
    const rolledNow = advanced && Boolean(live.querySelector(".banner .dice[data-rolled]"));
    const changed = roll !== rollAnnounced;
    rollAnnounced = roll;
    const undone = Boolean(live.querySelector(".live[data-undone]"));
    if (!roll || !(rolledNow || (changed && !undone))) return "";
    const turn = live.querySelector(".turn-text");
    return `Roll: ${roll}.${turn ? " " + turn.textContent.trim() : ""}`;
  }

  // the turn coming to this player is news too, without a roll (Qwixx' colour step after
  // the white sum, the next roll becoming theirs): the banner's line when it is this
  // player's (data-yours) and was not, or its step changed. Not after an undo (its note
  // says what happened), and not twice: a roll's news ends with the same line
  function yoursNow() {
    const turn = live.querySelector(".turn-text[data-yours]");
    return turn ? turn.dataset.step : "";
  }

  let turnAnnounced = yoursNow(); // the turn the page opened with is not news

  function turnNews(rollSaid) {
    const step = yoursNow();
    const isNew = step !== "" && step !== turnAnnounced;
    turnAnnounced = step;
    if (!isNew || rollSaid || live.querySelector(".live[data-undone]")) return "";
    return live.querySelector(".turn-text").textContent.trim();
  }

  // what a redraw brought that a screen reader should hear (the roll, the undo's note),
  // read out by the region that stays
  function announce(...news) {
    const said = news.filter(Boolean);
    if (said.length) announcer.textContent = said.join(" ");
  }

  function swap(html) {
    const hadUndo = Boolean(live.querySelector("[data-undo]"));
    const shown = stateId();
    lastSwapAt = Date.now();
    const focused = focusPath();
    live.innerHTML = html;
    refocus(focused);
    const roll = rollNews(shown !== null && stateId() > shown);
    restorePicks();
    restoreToggles();
    markPending();
    questions.restore();
    showConn();
    sayStaleOffline();
    hostToolsFollowTheEnd();
    announce(roll, turnNews(Boolean(roll)), showUndoNote(hadUndo, shown));
  }

  // -- the undo note --------------------------------------------------------------------
  // a line at the undo's place in the banner, in the server's words: what another device's
  // undo took back, as it happens (data-undo-news: not on a reload, which shows no change),
  // and why this device's undo button went away (the session's refusal, data-undo-why: a
  // roll came, another player acted on it). It stays a while across the redraws other
  // players' taps cause; the reason goes once this device may undo again. It is drawn anew
  // with #live, so a screen reader hears it through the announcer, which stays
  const UNDO_NOTE_MS = 10000;
  const undoNote = document.createElement("p");
  undoNote.className = "undo-note";
  undoNote.id = "undo-note";
  undoNote.hidden = true;
  let undoNoteTimer = null;
  let undoNoteSaysWhy = false;

  // the note's words when a new one shows ("" otherwise)
  function showUndoNote(hadUndo, shown) {
    const slot = live.querySelector(".undo-slot");
    if (!slot) return "";
    slot.append(undoNote);
    if (isFinished()) {
      // the end card is the news: no note sits over it from the sticky banner (a "why your
      // undo went away" of the roll before the last move, or of that move itself)
      clearTimeout(undoNoteTimer);
      undoNote.hidden = true;
      return "";
    }
    const offered = Boolean(slot.querySelector("[data-undo]"));
    const lines = [];
    if (shown !== null && stateId() > shown && slot.dataset.undoNews) lines.push(slot.dataset.undoNews);
    const why = hadUndo && !offered && slot.dataset.undoWhy;
    if (why) lines.push(slot.dataset.undoWhy);
    if (lines.length) {
      undoNoteSaysWhy = Boolean(why);
      // only why: a quiet line at the banner's foot, out of the way of the next step (the
      // news of another device's undo stays a box by the turn line)
      undoNote.classList.toggle("why-only", lines.length === 1 && Boolean(why));
      undoNote.textContent = lines.join("\n");
      undoNote.hidden = false;
      clearTimeout(undoNoteTimer);
      undoNoteTimer = setTimeout(() => { undoNote.hidden = true; }, UNDO_NOTE_MS);
    } else if (offered && undoNoteSaysWhy) {
      undoNote.hidden = true;  // it may undo again: why it could not is old news
    }
    return lines.join(" ");
  }

  // the host tools outside the redrawn part: a finished game keeps export and a seat to
  // look from, and "Play again"; freeing a seat, the automatic passes and ending the game
  // are refused once it is over. An undo may reopen a game its rules ended: both ways
  function hostToolsFollowTheEnd() {
    const finished = isFinished();
    page.querySelectorAll("[data-host-running]").forEach((tools) => { tools.hidden = finished; });
    page.querySelectorAll("[data-host-finished]").forEach((tools) => { tools.hidden = !finished; });
    // the join code serves nobody once the game is over: the panel folds at the end, as
    // the page of a finished game draws it, even where the host had opened it by hand
    if (finished && !wasFinished && joinPanel) joinPanel.open = false;
    wasFinished = finished;
  }

  function isFinished() { return Boolean(live.querySelector(".live.finished")); }
  let wasFinished = isFinished();

  // -- the outbox -----------------------------------------------------------------------
  // One outbox for every tab of this browser on this screen (localStorage). Two tabs of
  // one phone on the same sheet each wrote their own taps over the other's: a tap kept by
  // a tab without a connection was gone from it once the other tab's tap was answered,
  // and never sent once its tab was closed; nor did the other tab show it (its box, not
  // dashed there, was tapped again). Each tab now writes only its own changes into what
  // is stored (its taps, each marked whether it waits for a socket; the ones it had
  // answered taken out), and takes up the taps another tab keeps without a socket, or left
  // behind when it was closed: sent with the same action id, a tap is applied once,
  // whichever tab's copy comes first; the other copy is answered as a duplicate.
  // Each tap is stored under a key of its own (the outbox's key, ":", its action id): two
  // tabs writing one shared list at one instant each wrote it from a view without the
  // other's write, and the last write lost the other tab's tap (a tab's view of
  // localStorage takes in other tabs' writes only between its tasks). A tab writes and
  // removes only its own taps' keys, so no write overwrites another tab's tap
  const answered = new Set(); // ids this tab had answered: never taken up again
  const entryPrefix = `${outboxKey}:`;

  function isKeptTap(item) { return Boolean(item && item.body && item.body.action_id); }

  function parsed(text) {
    try { return JSON.parse(text); } catch (e) { return null; }
  }

  // every tap stored, in the order made; with those of the one list a page before the
  // per-tap keys left (a tap kept offline across the update is not lost)
  function storedOutbox() {
    const items = [];
    try {
      for (let i = 0; i < localStorage.length; i += 1) {
        const key = localStorage.key(i);
        if (key && key.startsWith(entryPrefix)) items.push(parsed(localStorage.getItem(key)));
      }
      const legacy = parsed(localStorage.getItem(outboxKey));
      if (Array.isArray(legacy)) items.push(...legacy);
    } catch (e) { return []; }
    return items.filter(isKeptTap).sort((a, b) => (a.madeAt || 0) - (b.madeAt || 0));
  }

  function storeEntry(id, item) {
    try {
      if (item) localStorage.setItem(entryPrefix + id, JSON.stringify(item));
      else localStorage.removeItem(entryPrefix + id);
    } catch (e) { /* private mode: the taps are still kept in this page */ }
  }

  // `leaving`: the tab is going away (closed, reloaded): all its taps are left to the others
  // A tap is written when it is new to the store or its `waiting` changed, not each time:
  // a tab without a socket wrote all its taps again at every failed reconnect, and so put
  // back a tap another tab had got answered meanwhile (its removal not yet seen here):
  // that tab, reloaded, sent it again and showed its answer a second time
  function saveOutbox(leaving) {
    for (const item of pending.values()) {
      const waiting = Boolean(leaving) || item.sentOn !== socketCount || !isOpen();
      if (item.storedWaiting === waiting) continue;
      item.storedWaiting = waiting;
      const {kind, body, moveAttr, dice, label, madeAt} = item;
      storeEntry(body.action_id, {kind, body, moveAttr, dice, label, madeAt, waiting});
    }
    // a tap this tab had answered, written again by a tab that still held it
    for (const item of storedOutbox()) if (answered.has(item.body.action_id)) storeEntry(item.body.action_id, null);
    try { localStorage.removeItem(outboxKey); } catch (e) { /* its taps are this tab's now */ }
  }

  // the stored taps this tab does not hold (`all`: also those another tab is sending)
  function takeUp(all) {
    let taken = 0;
    for (const item of storedOutbox()) {
      const id = item.body.action_id;
      if (pending.has(id) || answered.has(id) || !(all || item.waiting)) continue;
      pending.set(id, {...item, element: null, sentOn: -1, offline: true, storedWaiting: item.waiting});
      taken += 1;
    }
    return taken;
  }

  function loadOutbox() { takeUp(true); }

  // a stored tap removed is one another tab got answered (a tab removes only those): this
  // tab's copy goes quietly, neither kept nor sent again; one written back after this tab
  // had it answered (a tab that had not yet seen the removal) is taken out again
  function answeredElsewhere(event) {
    const id = event.key.slice(entryPrefix.length);
    if (event.newValue === null && pending.has(id)) settle(id);
    else if (event.newValue !== null && answered.has(id)) storeEntry(id, null);
  }

  window.addEventListener("storage", (event) => {
    if (event.key && event.key.startsWith(refusedPrefix)) {
      if (event.newValue !== null) refusalNoted(event.key); // (a note gone after its minute: no news)
      return;
    }
    const ours = event.key === null || event.key === outboxKey || event.key.startsWith(entryPrefix);
    if (ours && event.key && event.key.startsWith(entryPrefix)) answeredElsewhere(event);
    if (!ours || !takeUp(false)) return;
    markPending();
    if (isOpen()) { flush(); awaitAnswer(); } else showConn();
  });
  window.addEventListener("pagehide", () => { if (pending.size) saveOutbox(true); });

  // -- a refusal shown once by the tabs of one browser -----------------------------------
  // Two tabs holding one tap (one made it, the other took it up) may both send it, and
  // each got the refusal: "Not saved: Red 7" showed in both. A tab that shows a refusal
  // notes it under a key of its own (`tc-refused-TABLE-VIEW:ACTION_ID:TAB`: no two tabs
  // write one key, so no write hides another's, and each tab hears the other's); a tab
  // whose refusal of that tap comes after another's note lets its copy go quietly, and
  // of two that showed it at one instant the one with the lower tab id keeps the line,
  // the other takes its line back. Notes go after a minute (their tab's own timer, or
  // the next page opened after a tab closed)
  const tabId = newActionId();
  const refusedPrefix = `tc-refused-${tableId}-${mode}:`;
  const REFUSAL_NOTE_MS = 60000;
  const shownRefusals = new Map(); // action id -> its line ("" while it waits for a redraw)

  // the other tabs that noted showing the refusal of `actionId`
  function refusalNotedBy(actionId) {
    const tabs = [];
    try {
      for (let i = 0; i < localStorage.length; i += 1) {
        const [id, tab] = noteOf(localStorage.key(i));
        if (id === actionId && tab !== tabId) tabs.push(tab);
      }
    } catch (e) { return []; }
    return tabs;
  }

  // a note's key as [action id, tab id]; [] for any other key
  function noteOf(key) {
    if (!key || !key.startsWith(refusedPrefix)) return [];
    return key.slice(refusedPrefix.length).split(":");
  }

  function noteRefusalShown(actionId) {
    const key = `${refusedPrefix}${actionId}:${tabId}`;
    try { localStorage.setItem(key, String(Date.now())); } catch (e) { return; }
    setTimeout(() => { try { localStorage.removeItem(key); } catch (e) { /* gone */ } }, REFUSAL_NOTE_MS);
  }

  function forgetOldNotes() {
    try {
      const keys = Array.from({length: localStorage.length}, (_, i) => localStorage.key(i));
      for (const key of keys.filter((k) => noteOf(k).length)) {
        if (!(Date.now() - Number(localStorage.getItem(key)) < REFUSAL_NOTE_MS)) localStorage.removeItem(key);
      }
    } catch (e) { /* nothing kept */ }
  }

  // another tab showed the refusal of a tap: this tab's copy goes quietly, and its own
  // line of it (shown at the same instant) goes when the other tab's id is the lower
  function refusalNoted(key) {
    const [id, tab] = noteOf(key);
    if (!tab || tab === tabId) return;
    if (pending.has(id)) settle(id);
    if (!shownRefusals.has(id) || !(tab < tabId)) return;
    withdrawLine(shownRefusals.get(id));
    shownRefusals.delete(id);
    const queued = staleOffline.findIndex((item) => item.body.action_id === id);
    if (queued >= 0) staleOffline.splice(queued, 1);
  }

  // a box with a tap waiting keeps its dashed "pending" mark across redraws
  function markPending() {
    const boxes = Array.from(live.querySelectorAll("[data-move]"));
    for (const item of pending.values()) {
      if (item.element && item.element.isConnected) continue;
      const element = item.moveAttr ? boxes.find((b) => b.dataset.move === item.moveAttr)
        : item.kind === "undo" ? live.querySelector("[data-undo]") : null;
      item.element = element || null;
      if (element) element.classList.add("pending");
    }
  }

  function flush() {
    for (const item of pending.values()) {
      clearTimeout(item.resendTimer); // on the socket now: its answer comes there
      item.resendTimer = null;
      if (item.sentOn === socketCount) continue;
      if (item.sentOn !== -1) item.offline = true; // the connection dropped before its answer
      item.sentOn = socketCount;
      socket.send(JSON.stringify({type: item.kind, ...item.body}));
    }
    saveOutbox(); // on their way: no other tab takes them up
    showConn();
  }

  // -- a socket that died without closing ------------------------------------------------
  // The café's Wi-Fi drops the phone while the browser still holds the socket open: taps
  // sent on it go nowhere, no close comes for minutes, and the banner said "live" over a
  // tap that stayed dashed. A tap left unanswered ANSWER_MS on the socket it was sent on
  // (nothing at all came on it meanwhile: any frame shows it alive) gives that socket up:
  // a new one is opened and the outbox sent again with the same action ids (applied once)
  const ANSWER_MS = 5000;
  let answerTimer = null;

  function unansweredOnThisSocket() {
    if (!isOpen()) return false;
    return pingedOn === socketCount || Array.from(pending.values()).some((item) => item.sentOn === socketCount);
  }

  // An idle phone's socket dies as silently, with nobody tapping: the banner said "live"
  // for as long as the player only watched (nothing pushed, no other player's move). A
  // socket that carried nothing for IDLE_MS is asked whether it is still there (a ping the
  // server answers with a pong: nothing read or drawn; 20 tables of 6 idle devices send 8
  // a second in all); no frame within ANSWER_MS gives it up as an unanswered tap does. A
  // screen coming back on (the phone woke up: its timers slept too) asks at once
  const IDLE_MS = 15000;
  const WOKEN_ASKS_AFTER_MS = 3000;
  let idleTimer = null;
  let lastHeardAt = 0;
  let pingedOn = 0; // the socket a ping waits on for any frame; 0: none

  function heard() {
    lastHeardAt = Date.now();
    pingedOn = 0;
    clearTimeout(idleTimer);
    idleTimer = setTimeout(askIfAlive, IDLE_MS);
  }

  function askIfAlive() {
    clearTimeout(idleTimer);
    idleTimer = null;
    if (!isOpen() || pingedOn === socketCount) return;
    pingedOn = socketCount;
    socket.send(JSON.stringify({type: "ping"}));
    if (answerTimer === null) awaitAnswer();
  }

  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && Date.now() - lastHeardAt > WOKEN_ASKS_AFTER_MS) askIfAlive();
  });

  function awaitAnswer() {
    clearTimeout(answerTimer);
    answerTimer = unansweredOnThisSocket() ? setTimeout(giveUpSilentSocket, ANSWER_MS) : null;
  }

  function giveUpSilentSocket() {
    answerTimer = null;
    if (!unansweredOnThisSocket()) return;
    clearTimeout(idleTimer);
    socket.onclose = null;
    socket.onmessage = null;
    socket.close();
    socket = null;
    setConn("connecting");
    clearTimeout(retryTimer);
    connect();
  }

  // -- the WebSocket --------------------------------------------------------------------
  // A café's Wi-Fi that carries nothing, without the device noticing (no `offline` event):
  // a new socket's connect, or the fetch asking whether to retry, is never answered nor
  // refused, and the banner said "connecting…" for the minutes the browser waits. An
  // attempt unanswered CONNECT_MS is given up, the banner says the table does not answer,
  // and it is tried again after the usual backoff
  const CONNECT_MS = 8000;
  let connectTimer = null;

  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${location.host}/t/${tableId}/ws?view=${mode}`);
    socketCount += 1;
    clearTimeout(connectTimer);
    connectTimer = setTimeout(() => giveUpConnecting(socketCount), CONNECT_MS);
    socket.onopen = () => {
      clearTimeout(connectTimer);
      retryMs = 300;
      setConn("live");
      heard();
      flush();
      awaitAnswer();
    };
    socket.onmessage = (event) => { heard(); handle(JSON.parse(event.data)); awaitAnswer(); };
    socket.onclose = (event) => {
      socket = null;
      clearTimeout(idleTimer);
      clearTimeout(connectTimer);
      if (pending.size) saveOutbox(); // its taps wait now: another tab with a socket sends them
      // a view the server draws no more (a page from before its update): the device
      // still holds its seat, so a reload, not the join code, brings the page back
      if (event.code === 1008 && event.reason === "unknown view") { setConn("outdated"); return; }
      if (event.code === 1008) { deletedAs(event.reason); accessLost(); return; }
      setConn("offline");
      retryLater();
    };
  }

  // a socket's close reason: "game_deleted", or "game_deleted no_place" where the next
  // game keeps no place for this device: its button goes, the banner asks for the code
  function deletedAs(reason) {
    gameDeleted = reason.startsWith("game_deleted");
    noPlaceNext = reason === "game_deleted no_place";
    if (noPlaceNext) live.querySelectorAll("[data-next-seat]").forEach((button) => { button.hidden = true; });
  }

  function retryLater() {
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => retryUnlessRefused(socketCount), retryMs);
    retryMs = Math.min(retryMs * 2, 5000);
  }

  function giveUpConnecting(attempt) {
    if (attempt !== socketCount || !socket || socket.readyState !== WebSocket.CONNECTING) return;
    socket.onopen = null;
    socket.onclose = null;
    socket.onmessage = null;
    socket.close();
    socket = null;
    if (pending.size) saveOutbox(); // its taps wait: another tab with a socket sends them
    setConn("unreachable");
    retryLater();
  }

  // the server refused this device (its join was withdrawn): the waiting taps are sent
  // once over HTTP, whose answer names the reason
  function accessLost() {
    setConn("refused");
    // the page it holds may be from before (a seat freed while this device slept):
    // greyed, without the turn or any control, it no longer reads as still playing
    document.body.classList.add("seat-lost");
    document.dispatchEvent(new Event("table:access-lost")); // camera.js stops asking
    for (const [actionId, item] of pending) resendOverHttp(actionId, item);
  }

  // A socket the server refuses at its handshake (the seat was freed, or the table's
  // tokens ended, while this device was offline: 403 before the socket opens) closes as
  // a lost network does (1006), and the page would say "Offline" and retry for ever. The
  // table's state tells them apart (the API's answer: a page would redirect to the join
  // form): refused to this device, the access is lost; unreachable or answered, the
  // socket is tried again. A game the history deleted while this device was offline
  // closes its socket with 1008 game_deleted (to the devices that held it only, as to a
  // screen still connected), and its state is answered 410 game_deleted
  function retryUnlessRefused(closedCount) {
    // the silent Wi-Fi: retried, not waited on
    fetchWithin(`/api/tables/${tableId}/state`, {credentials: "same-origin"}, CONNECT_MS)
      .then((r) => (r.status === 410 ? "deleted" : [401, 403, 404].includes(r.status) ? "refused" : "retry"))
      .catch(() => "retry")
      .then((next) => {
        if (socket || socketCount !== closedCount) return; // the online event reconnected
        if (next === "retry") { connect(); return; }
        gameDeleted = next === "deleted";
        accessLost();
      });
  }

  // -- the host's join panel: folds away once every seat is taken, unless the host
  // opened or folded it by hand -------------------------------------------------------
  const joinPanel = document.getElementById("join-panel");
  let joinTouched = false;
  if (joinPanel) {
    joinPanel.querySelector("summary").addEventListener("click", () => { joinTouched = true; });
  }

  function seatsChanged(message) {
    if (!joinPanel) return;
    const taken = new Set(message.taken);
    document.getElementById("seated-count").textContent = `${taken.size} of ${message.seats} seats taken`;
    document.getElementById("seats-away").textContent = message.away.map((name) => `${name}: away`).join(", ");
    // the "Free a seat" buttons sit in the host tools, beside the join panel
    page.querySelectorAll("[data-host-free]").forEach((button) => {
      button.hidden = !taken.has(Number(button.dataset.hostFree));
    });
    questions.restore();  // a question whose button went (with the focus) ends
    // a seat taken at a finished game (a device looking at the end) unfolds nothing
    if (!joinTouched && !isFinished()) joinPanel.open = taken.size < message.seats;
  }

  function handle(message) {
    if (message.type === "state") {
      swap(message.html);
    } else if (message.type === "seats") {
      seatsChanged(message);
    } else if (message.type === "ack") {
      const item = pending.get(message.action_id);
      settle(message.action_id);
      clearRefusals(item);
    } else if (message.type === "error") {
      refused(message);
    }
  }

  function settle(actionId) {
    answered.add(actionId);
    const item = pending.get(actionId);
    if (item && item.element) item.element.classList.remove("pending");
    pending.delete(actionId);
    saveOutbox();
    showConn();
  }

  // what a refusal says: a tap made before the connection dropped (or while it was down)
  // is refused after the reconnect, so it says it was not saved and why. Whether the roll
  // changed is told from the fresh state, which may arrive after the refusal: such
  // refusals wait for the next redraw (refresh() asks for one)
  const staleOffline = [];

  // "Not saved: Red 7." : the refusal names the tap it dropped (a reconnect may refuse
  // several taps at once, made minutes ago)
  function notSaved(item) {
    return item && item.label ? `Not saved: ${item.label}. ` : "Not saved: ";
  }

  // what happened, from the roll then and now: a roll where none showed was rolled, one
  // gone (the turn passed on: no roll yet) is the game moving on. The advice only where
  // this screen offers something to tap: a pound refused after the roll, or a save made
  // on a phone after the player's tablet ended the turn, has nothing to choose again
  function staleText(item) {
    const dice = diceShown();
    const canAct = Boolean(live.querySelector("[data-move], [data-roll-submit]"));
    let what = "The game moved on while you were offline";
    let advice = "; tap again";
    if (dice && item.dice !== dice) {
      what = item.dice ? "The roll changed while you were offline" : "The dice were rolled while you were offline";
      advice = "; choose again with this roll";
    }
    return notSaved(item) + what + (canAct ? advice : "");
  }

  function sayStaleOffline() {
    while (staleOffline.length) {
      const item = staleOffline.shift();
      shownRefusals.set(item.body.action_id, showToast(staleText(item)));
    }
  }

  function refused(message) {
    const id = message.action_id;
    // a second answer to a tap this tab let go (another tab had it answered): said once
    if (id && answered.has(id) && !pending.has(id)) return;
    const item = pending.get(id);
    settle(id);
    if (id && refusalNotedBy(id).length) { markRefused(item, message); return; } // another tab said it
    if (id) noteRefusalShown(id);
    const offline = item && item.offline;
    let line = "";
    if (offline && message.reason === "stale_state") staleOffline.push(item);
    // a tap the store could not save (a full or failed disk) says so first, naming it
    else if (offline || message.reason === "storage") line = showToast(notSaved(item) + capital(message.message || "refused"));
    else line = showToast(message.message || "refused");
    if (id) shownRefusals.set(id, line);
    markRefused(item, message);
  }

  // the refused box flashes where it shows; a stale tap's screen is drawn anew
  function markRefused(item, message) {
    if (item && item.element && item.element.isConnected) {
      item.element.classList.add("refused");
      setTimeout(() => item.element.classList.remove("refused"), 900);
    }
    if (message.reason === "stale_state") refresh();
  }

  function refresh() {
    if (isOpen()) {
      socket.send(JSON.stringify({type: "sync"}));
    } else {
      fetchWithin(`/t/${tableId}/live?view=${mode}`, {credentials: "same-origin"})
        .then((r) => (r.ok ? r.text() : Promise.reject(r)))
        .then(swap)
        .catch(() => {});
    }
  }

  // -- sending --------------------------------------------------------------------------
  function send(kind, fields, element) {
    const actionId = newActionId();
    // data-race (e.g. Sixes' pound): a move several devices race for; the engine's turn
    // declares the race and the session judges it, so `race: true` is only a hint
    const race = Boolean(element && element.hasAttribute("data-race"));
    const body = {action_id: actionId, expected_state_id: stateId(), ...(race ? {race} : {}), ...fields};
    const moveAttr = element && element.dataset.move ? element.dataset.move : null;
    const label = tapName(kind, fields, element);
    const item = {kind, body, element, moveAttr, label, dice: diceShown(), sentOn: -1, offline: !isOpen(), madeAt: Date.now()};
    pending.set(actionId, item);
    if (element) element.classList.add("pending");
    if (isOpen()) {
      item.sentOn = socketCount;
      socket.send(JSON.stringify({type: kind, ...body}));
      if (answerTimer === null) awaitAnswer();
    }
    saveOutbox(); // after the sending: a tap on its way is not another tab's to send
    showConn();
  }

  // a tap in words, for a refusal that arrives later: the box's label ("Red 7"), the
  // button's text ("Pass"), the roll's dice
  function tapName(kind, fields, element) {
    if (kind === "undo") return "Undo";
    const move = fields && fields.move;
    if (move && move.kind === "roll" && Array.isArray(move.dice)) {
      return "the roll " + move.dice.map((d) => `${d.colour} ${d.value}`).join(", ");
    }
    if (!element) return "";
    return (element.getAttribute("aria-label") || element.dataset.label || element.textContent || "").trim().replace(/\s+/g, " ");
  }

  // a resend unanswered (the Wi-Fi went silent) or not sent (offline) keeps its tap and is
  // tried again until the table answers: its answer (a refusal, most often) names the tap.
  // Each try that fails waits longer for the next (5, 10, 20 s, then every 30 s: a phone
  // left offline no longer asks every 5 s for as long as it stays so), and the network
  // back (`online`, a socket open again) sends at once. One request per tap at a time: an
  // access lost again (another refused socket) starts no second round of tries
  const RESEND_MS = [5000, 10000, 20000, 30000];

  function resendOverHttp(actionId, item) {
    clearTimeout(item.resendTimer);
    item.resendTimer = null;
    if (item.resending) return;
    item.resending = true;
    const path = item.kind === "undo" ? "undo" : "actions";
    fetchWithin(`/api/tables/${tableId}/${path}`, {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify(item.body),
    }).then(async (response) => {
      const data = await response.json().catch(() => ({}));
      item.resending = false;
      if (response.ok) { settle(actionId); refresh(); }
      else refused({action_id: actionId, ...data});
    }).catch(() => {
      item.resending = false;
      if (!pending.has(actionId)) return;
      const tries = item.resendTries || 0;
      item.resendTries = tries + 1;
      item.resendTimer = setTimeout(() => resendOverHttp(actionId, item), RESEND_MS[Math.min(tries, RESEND_MS.length - 1)]);
    });
  }

  // the network is back: the taps waiting for their next try over HTTP go now
  function resendKeptNow() {
    for (const [actionId, item] of pending) if (item.resendTimer) resendOverHttp(actionId, item);
  }

  // (ending the game asks "tap again" as a penalty pass does: no native dialog, which
  // kiosk browsers may suppress)
  function hostPost(path) {
    fetchWithin(`/api/tables/${tableId}/${path}`, {method: "POST", credentials: "same-origin"})
      .then(async (r) => {
        const data = await r.json().catch(() => ({}));
        if (!r.ok) showToast(data.message || "refused");
      })
      // a host action is not kept for later like a tap (ending a game is not something to
      // do behind the host's back on reconnect): say it did not happen
      .catch((error) => showToast(timedOut(error) ? NO_ANSWER_DONE_OR_NOT
        : "not sent: the server cannot be reached. Nothing changed; try again when the banner says live"));
  }

  // a request whose answer never came (the Wi-Fi went silent) may have been done or not
  const NO_ANSWER_DONE_OR_NOT = "no answer from the table: this may or may not have been done; the table shows which once the banner says live";

  // -- the game played again -------------------------------------------------------------
  // the host's "Play again" (a new table of the same game, the same players in the same
  // seats), and each device's one tap from its finished screen to its place there: the
  // server answers with where this device now goes (its sheet, the host's table, a board)
  function goToNextGame(path) {
    fetchWithin(`/api/tables/${tableId}/${path}`, {method: "POST", credentials: "same-origin"})
      .then(async (r) => {
        const data = await r.json().catch(() => ({}));
        if (r.ok && data.url) location.assign(data.url);
        else showToast(data.message || "refused");
        // its place there was taken once and freed since: the screen is drawn anew, with
        // the join code to ask for in place of a button that cannot work (views.next_game)
        if (data.rule === "carried_once") refresh();
      })
      .catch((error) => showToast(timedOut(error) ? "no answer from the table; try again when the banner says live"
        : "not sent: the server cannot be reached; try again when the banner says live"));
  }

  // -- dice entry -----------------------------------------------------------------------
  function rollBox() { return live.querySelector(".roll-entry"); }

  function restorePicks() {
    const box = rollBox();
    if (!box) { picks.key = null; picks.values = []; return; }
    if (box.dataset.rollKey !== picks.key) { picks.key = box.dataset.rollKey; picks.values = []; picks.open = false; }
    // the next roll waits folded while a step is open; it stays open across redraws
    const fold = box.querySelector(".next-roll-fold");
    if (fold) {
      fold.open = Boolean(picks.open);
      fold.addEventListener("toggle", () => { picks.open = fold.open; });
    }
    box.querySelectorAll(".die-picker").forEach((row) => {
      const value = picks.values[Number(row.dataset.dieIndex)];
      row.querySelectorAll(".face").forEach((face) => {
        face.classList.toggle("chosen", Number(face.dataset.face) === value);
        face.setAttribute("aria-pressed", Number(face.dataset.face) === value ? "true" : "false");
      });
    });
    const rows = box.querySelectorAll(".die-picker").length;
    const complete = picks.values.filter((v) => v).length === rows;
    box.querySelector("[data-roll-submit]").disabled = !complete;
  }

  function submitRoll(button) {
    const box = rollBox();
    const dice = Array.from(box.querySelectorAll(".die-picker"), (row) => ({
      colour: row.dataset.dieColour,
      value: picks.values[Number(row.dataset.dieIndex)],
    }));
    send("act", {move: {kind: "roll", player: -1, dice}}, button);
  }

  // -- toggles ---------------------------------------------------------------------------
  // which toggles are pressed, by their group and place on the page (two dice of one value
  // are told apart by their place)
  function pressedToggles() {
    return Array.from(live.querySelectorAll("[data-toggles]"), (group) =>
      Array.from(group.querySelectorAll("[data-toggle-value]"), (t, i) => (t.getAttribute("aria-pressed") === "true" ? i : -1))
        .filter((i) => i >= 0));
  }

  function saveToggles() {
    try {
      sessionStorage.setItem(togglesKey, JSON.stringify({state: stateId(), groups: pressedToggles()}));
    } catch (e) { /* storage unavailable: the choice stays on this page only */ }
  }

  function forgetToggles() {
    try { sessionStorage.removeItem(togglesKey); } catch (e) { /* nothing kept */ }
  }

  function restoreToggles() {
    let kept = null;
    try { kept = JSON.parse(sessionStorage.getItem(togglesKey) || "null"); } catch (e) { kept = null; }
    if (!kept) return;
    if (kept.state !== stateId()) { forgetToggles(); return; }
    live.querySelectorAll("[data-toggles]").forEach((group, g) => {
      const pressed = new Set(kept.groups[g] || []);
      group.querySelectorAll("[data-toggle-value]").forEach((toggle, i) => {
        toggle.setAttribute("aria-pressed", pressed.has(i) ? "true" : "false");
      });
    });
  }

  // data-move-collect="FIELD" (e.g. Sixis' dice to save): the move's FIELD becomes the list
  // of the pressed toggles' values ([data-toggle-value] in the same [data-toggles] group)
  function collect(move, element) {
    const field = element.dataset.moveCollect;
    if (!field) return move;
    forgetToggles();  // sent: the choice is the move's now
    const group = element.closest("[data-toggles]") || page;
    const pressed = group.querySelectorAll("[data-toggle-value][aria-pressed='true']");
    return {...move, [field]: Array.from(pressed, (t) => JSON.parse(t.dataset.toggleValue))};
  }

  // -- asking once ----------------------------------------------------------------------
  // a button with data-confirm (a pass that costs a penalty, freeing a seat, ending the
  // game) asks once (tap_again.js). The question survives the redraws other players' taps
  // cause: it is kept by the button's move (or seat, or question), not by the element.
  // (a staying question, the roll that closes a choice, ends with the state it asked in)
  // A box that keeps its number or padlock (data-ask-beside) asks in the sticky banner,
  // seen wherever the finger is on the sheet
  const questions = window.TapAgain.questions(page, (element) =>
    element.dataset.move || element.dataset.hostFree || element.dataset.confirm,
  "data-confirm", stateId, () => live.querySelector(".banner"));

  // -- taps -----------------------------------------------------------------------------
  // A finger's slow double tap: the redraw its first tap led to may have put another button
  // under the finger (Sixes: Pass, then the next call's POUND on the same spot; Enter roll,
  // then a box), which the second tap would press. A touch tap near the tap before it (on
  // any button), soon after the redraw that followed that tap, is dropped; so is a tap on a
  // box whose tap is still waiting, and a finger's second tap on a "tap again" question
  // that comes too soon to have been read (a double tap armed and confirmed it at once:
  // tap_again.js).
  const SAME_SPOT_PX = 40;
  const REDRAW_GUARD_MS = 600;
  const DOUBLE_TAP_MS = 1500;
  const lastTap = {x: NaN, y: NaN, at: 0};
  let lastSwapAt = 0;

  function isSecondTapAfterRedraw(event) {
    if (window.TapAgain.pointerType() !== "touch") return false;
    const now = Date.now();
    const near = Math.hypot(event.clientX - lastTap.x, event.clientY - lastTap.y) < SAME_SPOT_PX;
    const dropped = near && lastSwapAt > lastTap.at && now - lastSwapAt < REDRAW_GUARD_MS
      && now - lastTap.at < DOUBLE_TAP_MS;
    if (!dropped) Object.assign(lastTap, {x: event.clientX, y: event.clientY, at: now});
    return dropped;
  }

  document.addEventListener("click", (event) => {
    const target = event.target.closest("button, [data-move]");
    if (!target || !page.contains(target)) return;
    const secondTap = isSecondTapAfterRedraw(event);  // every tap is noted
    // a tap on a box or an undo whose tap is still waiting would send it twice
    const waiting = (target.dataset.move || target.hasAttribute("data-undo")) && target.classList.contains("pending");
    if (waiting || (target.dataset.move && secondTap)) {
      event.preventDefault();
      return;
    }
    if (target.dataset.confirm !== undefined && !questions.confirmed(target)) {
      event.preventDefault();  // it asks (or a finger's double tap came too soon): nothing sent
      return;
    }
    if (target.dataset.move) {
      event.preventDefault();
      send("act", {move: collect(JSON.parse(target.dataset.move), target)}, target);
    } else if (target.hasAttribute("data-toggle-value")) {
      const pressed = target.getAttribute("aria-pressed") === "true";
      target.setAttribute("aria-pressed", pressed ? "false" : "true");
      saveToggles();
    } else if (target.classList.contains("face")) {
      const row = target.closest(".die-picker");
      picks.values[Number(row.dataset.dieIndex)] = Number(target.dataset.face);
      restorePicks();
    } else if (target.hasAttribute("data-roll-random")) {
      rollBox().querySelectorAll(".die-picker").forEach((row) => {
        picks.values[Number(row.dataset.dieIndex)] = 1 + Math.floor(Math.random() * 6);
      });
      restorePicks();
    } else if (target.hasAttribute("data-roll-submit")) {
      submitRoll(target);
    } else if (target.hasAttribute("data-undo")) {
      send("undo", {}, target);
    } else if (target.hasAttribute("data-play-again")) {
      goToNextGame("play_again");
    } else if (target.hasAttribute("data-next-seat")) {
      goToNextGame("next_seat");
    } else if (target.hasAttribute("data-host-end")) {
      hostPost("end");
    } else if (target.dataset.hostFree !== undefined) {
      hostPost(`seats/${target.dataset.hostFree}/free`);
    }
  });

  // the host's table option (a checkbox): the next roll passes for those who have not acted
  document.addEventListener("change", (event) => {
    const box = event.target;
    if (!box.hasAttribute || !box.hasAttribute("data-host-auto-pass")) return;
    fetchWithin(`/api/tables/${tableId}/auto_pass`, {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify({on: box.checked}),
    }).then(async (r) => { if (!r.ok) showToast((await r.json().catch(() => ({}))).message || "refused"); })
      .catch((error) => showToast(timedOut(error) ? NO_ANSWER_DONE_OR_NOT
        : "not sent: the server cannot be reached. The option did not change; set it again when the banner says live"));
  });

  // the device itself says it lost the network (Wi-Fi off, airplane mode): the socket may
  // look open for many seconds more, so the banner says offline now and the socket is
  // closed; back online, it reconnects at once
  // A device whose access is lost opens no socket again (it would be refused): the line
  // keeps saying so, and back online its kept taps are sent over HTTP at once
  window.addEventListener("offline", () => {
    if (connState !== "refused") setConn("offline");
    if (socket) socket.close();
  });
  window.addEventListener("online", () => {
    if (connState === "refused") { resendKeptNow(); return; }
    if (isOpen()) return;
    if (socket) { socket.onclose = null; socket.close(); socket = null; } // a stale attempt
    retryMs = 300;
    clearTimeout(retryTimer);
    connect();
  });

  forgetOldNotes();
  loadOutbox();
  restorePicks();
  restoreToggles();
  markPending();
  showConn();
  connect();
})();
