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
    const kept = Array.from(names.querySelectorAll("input"), (i) => i.value);
    names.querySelectorAll("label").forEach((l) => l.remove());
    for (let i = 0; i < n; i++) {
      const label = el("label", {class: "field"}, `Seat ${i + 1}`);
      label.append(el("input", {name: "name", maxlength: "40", value: kept[i] || `Player ${i + 1}`}));
      names.append(label);
    }
    options.querySelectorAll("label").forEach((l) => l.remove());
    for (const [field, value] of Object.entries(defaults())) {
      if (field === "players") continue;
      const label = el("label", {class: "field"}, field.replace(/_/g, " "));
      let input;
      if (typeof value === "boolean") {
        input = el("input", {type: "checkbox", "data-type": "bool"});
        input.checked = value;
      } else if (typeof value === "number") {
        input = el("input", {type: "number", value: String(value), "data-type": "number", step: "any"});
      } else if (typeof value === "string") {
        input = el("input", {value, "data-type": "string"});
      } else {
        // lists and objects: edited as JSON (e.g. Sixto's sheet letters ["A","B"])
        input = el("input", {value: JSON.stringify(value), "data-type": "json", class: "json"});
      }
      input.name = field;
      label.append(input);
      options.append(label);
    }
  }

  function readOptions() {
    const result = {players: Number(count.value)};
    for (const input of options.querySelectorAll("input")) {
      const type = input.dataset.type;
      if (type === "bool") result[input.name] = input.checked;
      else if (type === "number") result[input.name] = Number(input.value);
      else if (type === "string") result[input.name] = input.value;
      else result[input.name] = JSON.parse(input.value);
    }
    if (!("players" in defaults())) delete result.players;
    return result;
  }

  count.addEventListener("change", () => { fitCount(); render(); });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.hidden = true;
    let body;
    try {
      body = {
        game: game.name,
        options: readOptions(),
        players: Array.from(names.querySelectorAll("input"), (i) => i.value.trim() || i.placeholder),
      };
    } catch (e) {
      error.textContent = `An option is not valid JSON: ${e.message}`;
      error.hidden = false;
      return;
    }
    const response = await fetch("/api/tables", {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({}));
    if (response.ok) location.href = data.url;
    else { error.textContent = data.message || "could not start the table"; error.hidden = false; }
  });

  document.getElementById("import-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const failure = document.getElementById("import-error");
    failure.hidden = true;
    const file = document.getElementById("record-file").files[0];
    if (!file) return;
    let text = await file.text();
    const response = await fetch("/api/import", {
      method: "POST",
      credentials: "same-origin",
      headers: {"Content-Type": "application/json"},
      body: text,
    });
    const data = await response.json().catch(() => ({}));
    if (response.ok) location.href = data.url;
    else { failure.textContent = data.message || "not a game record"; failure.hidden = false; }
  });

  fitCount();
  render();
})();
