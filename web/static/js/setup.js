// The setup page: how sure the reader is per face and per set die, the teaching round
// (take what the camera reads, tap a die to change its value, confirm), the held-back dice
// (keep or delete) and every stored die as a picture, grouped by value and colour.
(() => {
  "use strict";
  const root = document.getElementById("setup");
  if (!root) return;
  const api = root.dataset.api;
  const statusEl = document.getElementById("setup-status");
  let snapshot = null; // {token, dice: [{index, value, colour, crop}]}, values as tapped
  let forgetting = false; // while the setup is being forgotten: no refresh draws its dice

  function send(method, path, body) {
    const options = {method, credentials: "same-origin", headers: {}};
    if (body !== undefined) {
      options.headers["Content-Type"] = "application/json";
      options.body = JSON.stringify(body);
    }
    return fetchWithin(path, options);
  }

  // a request the Wi-Fi left unanswered (fetchWithin gives it up) may have been carried
  // out, only its answer did not come back; a network that refused at once did nothing
  function notDone(error, what) {
    return timedOut(error)
      ? `no answer from the server: ${what} may or may not have been done; this page shows which once the server answers`
      : `not sent: the server cannot be reached, so ${what} was not done; try again`;
  }

  // a set die by its colour; of two or more of one colour, which ("white (1 of 2)"): the
  // set's own order, not where a die lies on a photo
  function setDieName(colours, j) {
    const same = colours.filter((c) => c === colours[j]).length;
    if (same < 2) return colours[j];
    const nth = colours.slice(0, j + 1).filter((c) => c === colours[j]).length;
    return `${colours[j]} (${nth} of ${same})`;
  }

  function bar(label, share, count) {
    const row = document.createElement("div");
    row.className = "bar";
    row.dataset.count = String(count);
    const name = document.createElement("span");
    name.textContent = label;
    const track = document.createElement("span");
    track.className = "bar-track";
    const fill = document.createElement("span");
    fill.className = "bar-fill";
    fill.style.width = `${Math.round(100 * share)}%`;
    track.appendChild(fill);
    const figure = document.createElement("span");
    // no dice: nothing to be sure of yet ("0 % sure" read as a reader sure of nothing)
    figure.textContent = count
      ? `${Math.round(100 * share)} % sure · ${count} ${count === 1 ? "die" : "dice"}`
      : "no dice yet";
    row.append(name, track, figure);
    return row;
  }

  function crop(src, value, extra) {
    const box = document.createElement("div");
    box.className = "crop";
    const img = document.createElement("img");
    img.src = src;
    img.alt = `a stored die showing ${value}`;
    img.width = 64;
    img.height = 64;
    const label = document.createElement("span");
    label.className = "value";
    label.textContent = String(value);
    box.append(img, label);
    (extra || []).forEach((el) => box.appendChild(el));
    return box;
  }

  function button(text, data) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "small";
    b.textContent = text;
    Object.entries(data).forEach(([k, v]) => { b.dataset[k] = String(v); });
    return b;
  }

  // a check's verdict in plain words, its figures (folds, errors, the sign test) folded
  // away for whoever wants them
  const FIGURES = " (left-out photos (";
  function showVerdict(el, text) {
    const cut = (text || "").indexOf(FIGURES);
    if (cut < 0) { el.textContent = text || ""; return; }
    const figures = document.createElement("details");
    figures.className = "verdict-figures";
    const summary = document.createElement("summary");
    summary.textContent = "the check's figures";
    figures.append(summary, text.slice(cut + 1));
    el.replaceChildren(text.slice(0, cut) + ". ", figures);
  }

  function show(body) {
    const s = body.summary;
    statusEl.textContent = `${s.used} confirmed dice learnt from` +
      (s.held.length ? `, ${s.held.length} held back for a look` : "") +
      ` · ${body.rolls_words}`;
    statusEl.dataset.used = String(s.used);
    const verdictEl = document.getElementById("setup-verdict");
    if (verdictEl) {
      showVerdict(verdictEl, s.verdict);  // the fold check's decision and why (issue 24)
      verdictEl.dataset.adopted = String(s.adopted);
    }
    const finderEl = document.getElementById("setup-finder-verdict");
    if (finderEl) {
      // the finder's own check (kept photos, every few of them): empty when it does not learn
      showVerdict(finderEl, s.finder_verdict);
      finderEl.dataset.adopted = String(s.finder_adopted);
      finderEl.hidden = !s.finder_verdict;
    }
    const deepEl = document.getElementById("setup-deep-verdict");
    if (deepEl) {
      // the fine-tuned classifier's check (`companion serve --fine-tune`): empty when off
      showVerdict(deepEl, s.deep_verdict);
      deepEl.dataset.adopted = String(s.deep_adopted);
      deepEl.hidden = !s.deep_verdict;
    }
    const faces = document.getElementById("face-bars");
    faces.replaceChildren(...s.faces.map((n, k) => bar(`face ${k + 1}`, s.face_sureness[k], n)));
    const dice = document.getElementById("die-bars");
    dice.replaceChildren(...s.set_colours.map((c, j) => bar(setDieName(s.set_colours, j), s.set_die_sureness[j], s.set_dice[j])));
    if (!s.set_colours.length) dice.textContent = "no dice set in this setup's calibration";
    const byId = new Map(body.examples.map((e) => [e.id, e]));
    const held = body.examples.filter((e) => e.held_back);
    document.getElementById("held-section").hidden = held.length === 0;
    // a table's host changes only the dice confirmed at that table (the server's page: all)
    const others = () => {
      const note = document.createElement("span");
      note.className = "other-table";
      note.textContent = "another game's";
      return [note];
    };
    // a finished game's page reads only: no buttons, the game's own dice unmarked
    const fixed = (e) => (e.this_game ? [] : others());
    document.getElementById("held-dice").replaceChildren(...held.map((e) =>
      crop(e.crop, e.value, body.read_only ? fixed(e) : e.editable === false ? others()
        : [button("Keep", {keep: e.id}), button("Delete", {remove: e.id})])));
    const groups = document.getElementById("groups");
    groups.replaceChildren(...body.groups.map((g) => {
      const section = document.createElement("div");
      section.className = "group";
      section.dataset.group = g.name;
      const title = document.createElement("h3");
      title.textContent = `${g.name} (${g.ids.length})`;
      const row = document.createElement("div");
      row.className = "crop-row";
      g.ids.forEach((id) => {
        const e = byId.get(id);
        row.appendChild(crop(e.crop, e.value, body.read_only ? fixed(e)
          : e.editable === false ? others() : [button("Delete", {remove: id})]));
      });
      section.append(title, row);
      return section;
    }));
    if (!body.groups.length) groups.textContent = "nothing yet: confirmed camera rolls and teaching rounds end up here";
    showOthers(body);
  }

  // a table's host page: how many dice this game taught (what its host forgets) and how
  // many others taught, which stay (a café's tables and games may share one setup); "this
  // game", as a verdict's "this camera setup" is the setup's every game
  function dice(n) { return `${n} ${n === 1 ? "die" : "dice"}`; }

  function showOthers(body) {
    const el = document.getElementById("setup-others");
    if (!el || body.this_table === undefined) return;
    const elsewhere = [];
    if (body.other_tables) elsewhere.push(`${dice(body.other_tables)} other games taught`);
    if (body.server) elsewhere.push(`${dice(body.server)} taught on the server machine`);
    el.dataset.thisTable = String(body.this_table);
    el.dataset.others = String(body.other_tables + body.server);
    if (body.read_only) {  // nothing to forget here: only what it taught
      el.textContent = `This game taught ${dice(body.this_table)}` +
        (elsewhere.length ? `; ${elsewhere.join(" and ")}.` : ".");
      return;
    }
    // a table that taught nothing (a game played again: the finished game taught the
    // dice) has nothing to forget: its button is off, and the page says where the
    // others' dice are forgotten
    const forget = document.getElementById("forget");
    if (forget) forget.disabled = body.this_table === 0;
    if (body.this_table === 0) {
      el.textContent = "This game taught no dice, so it has nothing to forget" + (elsewhere.length
        ? `; ${elsewhere.join(" and ")} stay: “Forget this setup”, on the server machine, forgets every game's.`
        : ".");
      return;
    }
    el.textContent = `This game taught ${dice(body.this_table)}` + (elsewhere.length
      ? `; ${elsewhere.join(" and ")}: ${body.other_tables + body.server === 1 ? "it stays" : "they stay"} when this game's are forgotten.`
      : ".");
  }

  async function refresh() {
    if (forgetting) return;
    let r;
    try {
      r = await send("GET", api);
    } catch (error) {
      // what the page shows may be old: it says so, and the next refresh asks again
      statusEl.textContent = timedOut(error) ? "no answer from the server: asking again in a moment"
        : "offline: the server cannot be reached; asking again in a moment";
      return;
    }
    const body = await r.json().catch(() => ({}));
    if (forgetting) return;  // an answer from before the forgetting began
    if (!r.ok) { statusEl.textContent = body.message || "not available"; return; }
    show(body);
  }

  function showSnapshot() {
    const row = document.getElementById("teach-dice");
    row.replaceChildren(...snapshot.dice.map((d, i) => {
      const box = crop(d.crop, d.value, [button("change", {cycle: i})]);
      box.dataset.index = String(i);
      box.classList.toggle("changed", d.value !== snapshot.read[i]);
      return box;
    }));
    document.getElementById("teach").hidden = false;
  }

  async function take() {
    const result = document.getElementById("teach-result");
    let r;
    try {
      r = await send("POST", `${api}/teach/snapshot`);
    } catch (error) {  // a reading taken and not answered changes nothing: take another
      result.textContent = timedOut(error) ? "no answer from the server: no reading; take it again"
        : "not sent: the server cannot be reached; take it again";
      return;
    }
    const body = await r.json().catch(() => ({}));
    if (!r.ok) { result.textContent = body.message || "no reading"; return; }
    snapshot = {token: body.token, dice: body.dice, read: body.dice.map((d) => d.value)};
    result.textContent = `${body.dice.length} dice read: tap "change" under a wrong one, then confirm`;
    showSnapshot();
  }

  async function confirm() {
    const result = document.getElementById("teach-result");
    const values = snapshot.dice.map((d) => d.value);
    let r;
    try {
      r = await send("POST", `${api}/teach`, {token: snapshot.token, values});
    } catch (error) {
      result.textContent = notDone(error, "this teaching");
      return;  // the dice stay: confirmed again once taught, they are refused (snapshot gone)
    }
    const body = await r.json().catch(() => ({}));
    result.textContent = r.ok ? `${body.stored.length} dice taught: throw again` : (body.message || "refused");
    snapshot = null;
    document.getElementById("teach").hidden = true;
    // the heads refresh in the background; ask again a moment later for the new bars
    await refresh();
    setTimeout(refresh, 1500);
  }

  // what a forgetting did: the server's page forgets every die; a table's host the dice of
  // that table, and the reader learns again from those that stay ("kept")
  function forgotten(body) {
    const all = `forgot ${body.deleted} stored dice of ${root.dataset.setup}`;
    if (!body.kept) return `${all}, and what the reader learnt from them: it reads with the models it came with`;
    // "kept" counts dice, not tables ("the 12 other tables ... stay" read as twelve tables)
    const stay = body.kept === 1 ? "stays" : "stay";
    return `forgot ${dice(body.deleted)} this game taught; the ${dice(body.kept)} taught in other games or on the server machine ${stay}, and the reader learns again from them`;
  }

  // a held-back die kept or a stored one deleted: the dice drawn anew, or why not. A
  // refusal (the die deleted meanwhile from another page, another table's die) is said in
  // its own line, in the server's words: the status line is redrawn by every refresh, and
  // the tap had seemed to do nothing at all
  async function sendThenRefresh(method, path, what) {
    const refusedEl = document.getElementById("setup-refused");
    refusedEl.textContent = "";
    let r;
    try {
      r = await send(method, path);
    } catch (error) {
      statusEl.textContent = notDone(error, what);
      return;
    }
    if (!r.ok) {
      const body = await r.json().catch(() => ({}));
      const why = body.message || `the server answered ${r.status}`;
      refusedEl.textContent = `${what.charAt(0).toUpperCase()}${what.slice(1)} was refused: ${why}`;
      refusedEl.scrollIntoView({block: "nearest"});
    }
    await refresh();
  }

  // the setup's DELETE: what the page says of it
  async function forget() {
    try {
      const r = await send("DELETE", api);
      const body = await r.json().catch(() => ({}));
      return r.ok ? forgotten(body) : (body.message || "not forgotten");
    } catch (error) {
      return notDone(error, "the forgetting");
    } finally {
      forgetting = false;
    }
  }

  // a button with data-confirm ("Forget every die"; a table's host page: "Forget what the
  // camera learnt", one DELETE of the table's setup) asks as the table page's host tools do
  // (tap_again.js): the first tap turns it into its question, a second tap does it
  const questions = window.TapAgain.questions(root);

  root.addEventListener("click", async (event) => {
    const target = event.target;
    if (!(target instanceof HTMLElement)) return;
    if (target.dataset.cycle !== undefined && snapshot) {
      const die = snapshot.dice[Number(target.dataset.cycle)];
      die.value = die.value % 6 + 1;
      showSnapshot();
    } else if (target.dataset.keep) {
      await sendThenRefresh("POST", `${api}/examples/${target.dataset.keep}/keep`, "keeping that die");
    } else if (target.dataset.remove) {
      await sendThenRefresh("DELETE", `${api}/examples/${target.dataset.remove}`, "deleting that die");
    } else if (target.id === "teach-take") {
      await take();
    } else if (target.id === "teach-confirm" && snapshot) {
      await confirm();
    } else if (target.id === "teach-cancel") {
      snapshot = null;
      document.getElementById("teach").hidden = true;
    } else if (target.id === "forget") {  // the server's page, or the table's host's
      if (!questions.confirmed(target)) return;
      const said = document.getElementById("setup-forgotten");
      said.textContent = "forgetting…";
      // no picture of a die being deleted is asked for meanwhile (nor by the timed refresh)
      forgetting = true;
      document.getElementById("groups").replaceChildren();
      document.getElementById("held-dice").replaceChildren();
      said.textContent = await forget();
      await refresh();
    }
  });
  refresh();
  setInterval(refresh, 10000);
})();
