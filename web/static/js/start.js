// The start page: builds the options form from each game's default options (served by the
// app from the engine's Options dataclasses), then creates the table through the JSON API.
(() => {
  "use strict";
  const games = JSON.parse(document.getElementById("games-data").textContent);
  const form = document.getElementById("start-form");
  const choice = document.getElementById("game-choice");
  const count = document.getElementById("player-count");
  const names = document.getElementById("names");
  const options = document.getElementById("options");
  const error = document.getElementById("start-error");
  let game = games[0];

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  games.forEach((g, i) => {
    const label = el("label", {class: "game-choice"});
    const radio = el("input", {type: "radio", name: "game", value: g.name});
    if (i === 0) radio.checked = true;
    radio.addEventListener("change", () => { game = g; fitCount(); render(); });
    label.append(radio, el("span", {}, `${g.title} (${g.low}${g.high ? "–" + g.high : "+"} players)`));
    choice.append(label);
  });

  function fitCount() {
    count.min = game.low;
    count.max = game.high || 12;
    const n = Number(count.value);
    if (n < game.low) count.value = game.low;
    if (game.high && n > game.high) count.value = game.high;
  }

  function defaults() {
    return game.defaults[String(count.value)] || game.schema;
  }

  function render() {
    const n = Number(count.value);
    // grow or shrink the name fields in place, so a field being typed in is never replaced
    const fields = names.querySelectorAll("label");
    for (let i = fields.length; i < n; i++) {
      const label = el("label", {class: "field"}, `Seat ${i + 1}`);
      label.append(el("input", {name: "name", maxlength: "40", value: `Player ${i + 1}`}));
      names.append(label);
    }
    for (let i = fields.length - 1; i >= n; i--) fields[i].remove();
    options.querySelectorAll("[data-seat-choice]").forEach((select) => fillSeats(select, 0));
    if (options.dataset.shown === `${game.name}:${n}`) return; // keep the host's edits
    options.dataset.shown = `${game.name}:${n}`;
    options.querySelectorAll(".option, .record-list, .more-options").forEach((l) => l.remove());
    const values = defaults();
    // the options most tables never change wait under "more options"
    const more = el("details", {class: "more-options"});
    const moreGrid = el("div", {class: "more-grid"});
    more.append(el("summary", {}, "More options"), moreGrid);
    for (const field of game.fields) {
      if (!(field.name in values)) continue;
      const item = optionInput(field, values[field.name]);
      (field.more ? moreGrid : options).append(item);
    }
    if (moreGrid.children.length) options.append(more);
  }

  // one option: its label, its input (by the kind the server derived from its type) and
  // its one-line help under it
  function optionInput(field, value) {
    if (field.kind === "records" && Array.isArray(value) && value.length) {
      return recordList(field, value);
    }
    // lists, and a number whose empty value is a phrase, take the whole row (never cut off)
    const wide = ["strs", "ints", "json"].includes(field.kind) || (field.kind === "optional_int" && (field.empty || "").length > 16);
    const label = el("label", {class: `field option${wide ? " wide" : ""}`, "data-option": field.name});
    label.append(el("span", {class: "option-label"}, field.label));
    let input;
    if (field.kind === "bool") {
      input = el("input", {type: "checkbox", "data-type": "bool"});
      input.defaultChecked = Boolean(value);
      label.classList.add("check");
    } else if (field.kind === "seat") {
      // a seat: chosen by name, not by a 0-based number
      input = el("select", {"data-type": "number", "data-seat-choice": ""});
      fillSeats(input, value);
    } else if (field.name.endsWith("_seed")) {
      // a seed (e.g. Sixis' deal): a fresh one per table, or the host types one to repeat a deal
      const fresh = new Uint32Array(1);
      crypto.getRandomValues(fresh);
      input = el("input", {type: "number", value: String(fresh[0]), "data-type": "number", min: "0", step: "1"});
    } else if (field.kind === "optional_int") {
      input = el("input", {type: "number", value: value === null ? "" : String(value), placeholder: field.empty || "default", "data-type": "optional", step: "1"});
    } else if (field.kind === "int") {
      input = el("input", {type: "number", value: String(value), "data-type": "number", step: "1", inputmode: "numeric"});
    } else if (field.kind === "str") {
      input = el("input", {value, "data-type": "string"});
    } else if (field.kind === "strs" || field.kind === "ints") {
      // a list of plain values (e.g. die colours): comma separated, wrapped, never cut off
      input = listInput(value.join(", "), field.empty, field.kind === "ints" ? "numbers" : "strings");
    } else {
      const shown = Array.isArray(value) && !value.length ? "" : JSON.stringify(value);
      input = listInput(shown, field.empty, "json");
      input.dataset.empty = JSON.stringify(value);
    }
    input.name = field.name;
    label.append(input);
    if (field.help) label.append(el("small", {class: "option-help"}, field.help));
    return label;
  }

  // the default is the textarea's own (its text), as an input's is its value attribute:
  // set as its current value only, anything that puts the form back to its defaults (a
  // reset, a browser restoring the page) left an empty box (Sixes' two dice colours)
  function listInput(text, empty, type) {
    const rows = Math.min(3, Math.max(1, Math.ceil(text.length / 30)));
    return el("textarea", {rows: String(rows), placeholder: empty || "", "data-type": type, spellcheck: "false"}, text);
  }

  // the options of a seat choice: "Seat 2: Bob" from the names typed so far. The field's
  // default (`chosen` at the first fill) is its default option (`selected`), as every
  // other field holds its own default: a reset or a browser restoring the page returns to
  // it, not to whichever option comes first; the host's pick is its current value only
  function fillSeats(select, chosen) {
    const picked = select.options.length ? Number(select.value) : chosen;
    if (!("default" in select.dataset)) select.dataset.default = String(chosen);
    const inputs = names.querySelectorAll("input");
    const last = inputs.length - 1;
    const fallback = Math.min(Number(select.dataset.default), last);
    select.replaceChildren(...Array.from(inputs, (input, i) => {
      const name = input.value.trim();
      const option = el("option", {value: String(i)}, `Seat ${i + 1}${name ? ": " + name : ""}`);
      option.defaultSelected = i === fallback;
      return option;
    }));
    select.value = String(Math.min(picked, last));
  }

  function isRecord(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }

  // A list of records (e.g. Sixto's sheet choice per seat): one line per item, an input
  // per plain field; other fields keep their default values.
  function recordList(field, items) {
    const box = el("div", {class: "record-list", "data-field": field.name});
    box.append(el("p", {class: "record-title"}, field.label));
    if (field.help) box.append(el("p", {class: "option-help"}, field.help));
    items.forEach((item, index) => {
      const line = el("div", {class: "record", "data-default": JSON.stringify(item)});
      line.append(el("span", {class: "record-index"}, `Seat ${index + 1}`));
      // the keys the game's view offers with their labels (OptionText.keys), else every key
      const offered = field.keys && field.keys.length ? new Map(field.keys) : null;
      for (const [key, v] of Object.entries(item)) {
        if (typeof v !== "string" && typeof v !== "number") continue;
        if (offered && !offered.has(key)) continue;
        const text = offered ? offered.get(key) : key.replace(/_/g, " ");
        const label = el("label", {class: "field inline"}, text.charAt(0).toUpperCase() + text.slice(1));
        label.append(el("input", {"data-key": key, "data-kind": typeof v, value: String(v), maxlength: "40"}));
        line.append(label);
      }
      box.append(line);
    });
    return box;
  }

  function readRecords(result) {
    for (const box of options.querySelectorAll(".record-list")) {
      result[box.dataset.field] = Array.from(box.querySelectorAll(".record"), (line) => {
        const item = JSON.parse(line.dataset.default);
        for (const input of line.querySelectorAll("input")) {
          item[input.dataset.key] = input.dataset.kind === "number" ? Number(input.value) : input.value.trim();
        }
        return item;
      });
    }
  }

  // an option typed as the help's example shows; a slip names the option by its label
  function written(input) {
    try { return JSON.parse(input.value); } catch (e) {
      const option = input.closest(".option");
      const label = option && option.querySelector(".option-label");
      throw new Error(`${label ? label.textContent.trim() : "An option"}: write it as the help below it shows`);
    }
  }

  function readOptions() {
    const result = {players: Number(count.value)};
    readRecords(result);
    for (const input of options.querySelectorAll("[data-type]")) {
      const type = input.dataset.type;
      if (type === "bool") result[input.name] = input.checked;
      else if (type === "number") result[input.name] = Number(input.value);
      else if (type === "string") result[input.name] = input.value;
      else if (type === "strings") result[input.name] = input.value.split(/[,\n]/).map((v) => v.trim()).filter(Boolean);
      else if (type === "numbers") result[input.name] = input.value.split(/[,\n]/).map((v) => v.trim()).filter(Boolean).map(Number);
      else if (type === "optional") result[input.name] = input.value.trim() === "" ? null : written(input);
      else result[input.name] = input.value.trim() === "" ? JSON.parse(input.dataset.empty || "null") : written(input);
    }
    if (!("players" in defaults())) delete result.players;
    return result;
  }

  count.addEventListener("change", () => { fitCount(); render(); });
  // the seats follow the number as it is typed (a number out of range waits for "change",
  // which fits it: typing 12 passes through 1)
  count.addEventListener("input", () => {
    const n = Number(count.value);
    if (count.value !== "" && n >= game.low && n <= (game.high || 12)) render();
  });
  names.addEventListener("input", () => {
    options.querySelectorAll("[data-seat-choice]").forEach((select) => fillSeats(select, 0));
  });
  // one start at a time: a second tap (or Enter) while the first waits for its answer
  // started a second table; the button is off until a refusal (or the deadline) comes,
  // and stays off while the page goes to the table started (`send` says true)
  function oneAtATime(formElement, send) {
    return async (event) => {
      event.preventDefault();
      if (formElement.dataset.busy) return;
      formElement.dataset.busy = "1";
      const button = formElement.querySelector("button[type=submit]");
      if (button) button.disabled = true;
      let leaving = false;
      try {
        leaving = await send();
      } finally {
        if (!leaving) {
          delete formElement.dataset.busy;
          if (button) button.disabled = false;
        }
      }
    };
  }

  // back to this page from the table started (kept in the browser's back/forward cache):
  // its buttons work again
  window.addEventListener("pageshow", (event) => {
    if (!event.persisted) return;
    document.querySelectorAll("form[data-busy]").forEach((busy) => {
      delete busy.dataset.busy;
      const button = busy.querySelector("button[type=submit]");
      if (button) button.disabled = false;
    });
  });

  form.addEventListener("submit", oneAtATime(form, async () => {
    error.hidden = true;
    let body;
    try {
      body = {
        game: game.name,
        options: readOptions(),
        players: Array.from(names.querySelectorAll("input"), (i, k) => i.value.trim() || `Player ${k + 1}`),
      };
    } catch (e) {
      error.textContent = e.message;
      error.hidden = false;
      return;
    }
    let response;
    try {
      response = await fetchWithin("/api/tables", {
        method: "POST",
        credentials: "same-origin",
        headers: {"Content-Type": "application/json"},
        body: JSON.stringify(body),
      });
    } catch (e) {
      error.textContent = notStarted(e, "the table");
      error.hidden = false;
      return;
    }
    const data = await response.json().catch(() => ({}));
    if (response.ok) { location.href = data.url; return true; }
    error.textContent = data.message || "could not start the table";
    error.hidden = false;
    return false;
  }));

  // a start the Wi-Fi left unanswered (fetchWithin gives it up) may have been made, only
  // its answer did not come back: starting again could make a second table, so the page
  // says where a started one shows; a network that refused at once started nothing
  function notStarted(e, what) {
    return timedOut(e)
      ? `No answer from the server: ${what} may or may not have been started; reload this page: a started game is listed under Games in progress`
      : `Not sent: the server cannot be reached, so ${what} was not started; try again`;
  }
  // an import replays the whole record before it answers: a long one takes a while
  const IMPORT_MS = 30000;

  const importForm = document.getElementById("import-form");
  importForm.addEventListener("submit", oneAtATime(importForm, async () => {
    const failure = document.getElementById("import-error");
    failure.hidden = true;
    const file = document.getElementById("record-file").files[0];
    if (!file) return;
    let text = await file.text();
    try {
      JSON.parse(text);
    } catch (e) {
      failure.textContent = `${file.name} is not a game record: it is not JSON.`;
      failure.hidden = false;
      return;
    }
    let response;
    try {
      response = await fetchWithin("/api/import", {
        method: "POST",
        credentials: "same-origin",
        headers: {"Content-Type": "application/json"},
        body: text,
      }, IMPORT_MS);
    } catch (e) {
      failure.textContent = notStarted(e, "the imported game");
      failure.hidden = false;
      return;
    }
    const data = await response.json().catch(() => ({}));
    if (response.ok) { location.href = data.url; return true; }
    failure.textContent = data.message || "not a game record";
    failure.hidden = false;
    return false;
  }));

  fitCount();
  render();
})();
