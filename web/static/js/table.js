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
  let retryMs = 300;
  let toastTimer = null;
  const pending = new Map(); // action_id -> {kind, body, element}
  const picks = {key: null, values: []}; // dice chosen in the roll entry

  function stateId() {
    const el = live.querySelector(".live");
    return el ? Number(el.dataset.stateId) : null;
  }

  function newActionId() {
    const bytes = new Uint8Array(12);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function showToast(text, kind) {
    // engine sentences start lower-case (they read well inside other text); shown alone
    // they begin with a capital
    toast.textContent = text ? text.charAt(0).toUpperCase() + text.slice(1) : text;
    toast.className = "toast " + (kind || "error");
    toast.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { toast.hidden = true; }, 4000);
  }

  function setConn(state, text) {
    if (!conn) return;
    conn.dataset.conn = state;
    conn.textContent = text;
  }

  function swap(html) {
    live.innerHTML = html;
    restorePicks();
  }

  // -- the WebSocket --------------------------------------------------------------------
  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${location.host}/t/${tableId}/ws?view=${mode}`);
    socket.onopen = () => { retryMs = 300; setConn("live", "live"); };
    socket.onmessage = (event) => handle(JSON.parse(event.data));
    socket.onclose = () => {
      setConn("offline", "reconnecting…");
      socket = null;
      // actions sent but not acknowledged go again over HTTP: the action id makes a
      // retry harmless (the server applies each id once)
      // A race move is not sent again: the server would refuse a late copy as stale once
      // a roll came after it; the player sees the outcome on the refreshed screen and may
      // tap again.
      for (const [actionId, item] of pending) {
        if (!item.race) { resendOverHttp(actionId, item); continue; }
        settle(actionId);
        showToast("connection lost: tap again if your tap does not show", "info");
      }
      setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 5000);
    };
  }

  function handle(message) {
    if (message.type === "state") {
      swap(message.html);
    } else if (message.type === "ack") {
      settle(message.action_id);
    } else if (message.type === "error") {
      refused(message);
    }
  }

  function settle(actionId) {
    const item = pending.get(actionId);
    if (item && item.element) item.element.classList.remove("pending");
    pending.delete(actionId);
  }

  function refused(message) {
    const item = pending.get(message.action_id);
    settle(message.action_id);
    showToast(message.message || "refused");
    if (item && item.element && item.element.isConnected) {
      item.element.classList.add("refused");
      setTimeout(() => item.element.classList.remove("refused"), 900);
    }
    if (message.reason === "stale_state") refresh();
  }

  function refresh() {
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify({type: "sync"}));
    } else {
      fetch(`/t/${tableId}/live?view=${mode}`, {credentials: "same-origin"})
        .then((r) => (r.ok ? r.text() : Promise.reject(r)))
        .then(swap)
        .catch(() => {});
    }
  }

  // -- sending --------------------------------------------------------------------------
  function send(kind, fields, element) {
    const actionId = newActionId();
    // data-race (e.g. Sixes' pound): several devices race for one move, so it goes with
    // race: true; the engine, not the stale-view check, tells the losers why, while the
    // state id still lets the server refuse a tap meant for a call a roll has closed
    const race = Boolean(element && element.hasAttribute("data-race"));
    const body = {action_id: actionId, expected_state_id: stateId(), ...(race ? {race} : {}), ...fields};
    const item = {kind, body, element, race};
    pending.set(actionId, item);
    if (element) element.classList.add("pending");
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify({type: kind, ...body}));
    } else {
      resendOverHttp(actionId, item);
    }
  }

  function resendOverHttp(actionId, item) {
    const path = item.kind === "undo" ? "undo" : "actions";
    fetch(`/api/tables/${tableId}/${path}`, {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify(item.body),
    }).then(async (response) => {
      const data = await response.json().catch(() => ({}));
      if (response.ok) { settle(actionId); refresh(); }
      else refused({action_id: actionId, ...data});
    }).catch(() => { /* offline: the socket's reconnect retries it */ });
  }

  function hostPost(path, confirmText) {
    if (confirmText && !window.confirm(confirmText)) return;
    fetch(`/api/tables/${tableId}/${path}`, {method: "POST", credentials: "same-origin"})
      .then(async (r) => {
        const data = await r.json().catch(() => ({}));
        if (!r.ok) showToast(data.message || "refused");
        else if (path.startsWith("seats/")) location.reload();
      });
  }

  // -- dice entry -----------------------------------------------------------------------
  function rollBox() { return live.querySelector(".roll-entry"); }

  function restorePicks() {
    const box = rollBox();
    if (!box) { picks.key = null; picks.values = []; return; }
    if (box.dataset.rollKey !== picks.key) { picks.key = box.dataset.rollKey; picks.values = []; }
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

  // data-move-collect="FIELD" (e.g. Sixis' dice to save): the move's FIELD becomes the list
  // of the pressed toggles' values ([data-toggle-value] in the same [data-toggles] group)
  function collect(move, element) {
    const field = element.dataset.moveCollect;
    if (!field) return move;
    const group = element.closest("[data-toggles]") || page;
    const pressed = group.querySelectorAll("[data-toggle-value][aria-pressed='true']");
    return {...move, [field]: Array.from(pressed, (t) => JSON.parse(t.dataset.toggleValue))};
  }

  // -- taps -----------------------------------------------------------------------------
  document.addEventListener("click", (event) => {
    const target = event.target.closest("button, [data-move]");
    if (!target || !page.contains(target)) return;
    if (target.dataset.move) {
      event.preventDefault();
      send("act", {move: collect(JSON.parse(target.dataset.move), target)}, target);
    } else if (target.hasAttribute("data-toggle-value")) {
      const pressed = target.getAttribute("aria-pressed") === "true";
      target.setAttribute("aria-pressed", pressed ? "false" : "true");
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
    } else if (target.hasAttribute("data-host-end")) {
      hostPost("end", "End this game now? Scores stay as they are.");
    } else if (target.dataset.hostFree !== undefined) {
      hostPost(`seats/${target.dataset.hostFree}/free`, null);
    }
  });

  restorePicks();
  connect();
})();
