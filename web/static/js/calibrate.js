// The calibration page: the live picture, what the camera reads, and saving a calibration.
(() => {
  "use strict";
  const picture = document.getElementById("calibrate-picture");
  const statusEl = document.getElementById("calibrate-status");
  const diceEl = document.getElementById("calibrate-dice");
  const result = document.getElementById("calibrate-result");
  let n = 0;
  function next() { n += 1; picture.src = `/calibrate/camera.jpg?n=${n}`; }
  picture.addEventListener("load", () => setTimeout(next, 250));
  picture.addEventListener("error", () => setTimeout(next, 1000));
  next();

  // every second the page asks the server what the camera reads and which calibration is
  // chosen, and draws both: a choice made elsewhere (another tab, a restart) shows without
  // a reload. An answer older than the one drawn last is dropped: a poll sent before a
  // Use would otherwise put the old choice back
  let asked = 0;
  let drawn = 0;
  let unanswered = 0; // polls sent and not yet answered nor given up
  async function poll() {
    const mine = ++asked;
    unanswered += 1;
    try {
      const r = await fetchWithin("/api/calibration", {credentials: "same-origin"});
      if (!r.ok) return;
      const body = await r.json();
      if (mine < drawn) return;
      drawn = mine;
      showReading(body);
      showMeasuring(body);
      showActive(body);
    } catch (error) { /* try again */ } finally { unanswered -= 1; }
  }
  function showReading(body) {
    const reading = body.reading;
    const frame = body.frame ? `${body.frame[0]}×${body.frame[1]}` : "no picture";
    statusEl.textContent = reading ? `${reading.dice.length} dice in view · frame ${frame}` : "no reading yet";
    diceEl.innerHTML = "";
    (reading ? reading.dice : []).forEach((d) => {
      const li = document.createElement("li");
      const side = Math.max(d.box[2] - d.box[0], d.box[3] - d.box[1]);
      li.textContent = `${d.colour || "?"} ${d.value ?? "?"} · ${side} px` + (d.flags.length ? ` · ${d.flags.join(", ")}` : "");
      diceEl.appendChild(li);
    });
  }
  // while the demo camera plays there is nothing of the host's to measure: the server's
  // words instead of a button that is refused (a webcam found later enables it)
  function showMeasuring(body) {
    const refused = body.measuring_refused || "";
    const note = document.getElementById("calibrate-measure-refused");
    note.textContent = refused;
    note.hidden = !refused;
    document.getElementById("calibrate-measure").disabled = Boolean(refused);
  }
  // the timed poll waits for the last: hung ones (given up after 8 s) would otherwise pile
  // up and hold every connection the browser allows the server
  setInterval(() => { if (!unanswered) poll(); }, 1000);
  poll();

  // a POST answered, or what the page says when it was not: unanswered (fetchWithin gives
  // it up) it may have been carried out, only its answer did not come back; a network
  // that refused at once did nothing. Not answered: {r: null, data: {message: those words}}
  async function post(path, body, ms) {
    const options = {method: "POST", credentials: "same-origin"};
    if (body) Object.assign(options, {headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
    try {
      const r = await fetchWithin(path, options, ms);
      return {r, data: await r.json().catch(() => ({}))};
    } catch (error) {
      return {r: null, data: {message: timedOut(error)
        ? "no answer from the server: this may or may not have been done; the page shows which once the server answers"
        : "not sent: the server cannot be reached; nothing changed"}};
    }
  }
  // measuring waits for the camera's next frames and reads each: longer than a request
  const MEASURE_MS = 60000;

  document.getElementById("calibrate-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    const area = String(form.get("play_area") || "").trim();
    const body = {name: form.get("name"), dice_set: form.get("dice_set")};
    if (area) body.play_area = area === "auto" ? "auto" : area.split(",").map(Number);
    result.textContent = "measuring…";
    const {r, data} = await post("/api/calibration", body, MEASURE_MS);
    if (r && r.ok) {
      listFile(String(body.name), data.calibration.name);
      await poll(); // the page shows the new choice as the result says it
    }
    result.textContent = r && r.ok ? `saved ${data.saved}` + (data.notes.length ? ` (${data.notes.join("; ")})` : "") : (data.message || "refused");
  });
  // the choice as the server has it (GET /api/calibration): its name or none, whether the
  // demo camera plays, and why no setup may be taught now (the server's words)
  function showActive(body) {
    const name = body.active;
    document.getElementById("calibrate-active").textContent = name || "none";
    // while the demo camera plays the choice is stored and waits for a real camera
    const waits = Boolean(name) && Boolean(body.demo);
    document.getElementById("calibrate-label").textContent = waits ? "Chosen" : "In use";
    document.getElementById("calibrate-demo").hidden = !waits;
    // what none means, or the button that goes back to none
    document.getElementById("calibrate-none").hidden = Boolean(name);
    document.getElementById("calibrate-use-none").hidden = !name;
    // the teaching round is the setup's now in use, or none; refused, the reason instead
    const refused = body.teaching_refused || "";
    document.getElementById("calibrate-teach").hidden = !name;
    document.getElementById("calibrate-teach-offer").hidden = Boolean(refused);
    document.getElementById("calibrate-teach-refused").hidden = !refused;
    document.getElementById("calibrate-teach-why").textContent = refused;
    document.getElementById("calibrate-teach-link").href = `/setups/${encodeURIComponent(name || "")}`;
    document.getElementById("calibrate-teach-setup").textContent = name || "";
    document.querySelectorAll("#calibrate-files li").forEach((li) => {
      li.classList.toggle("in-use", Boolean(name) && li.dataset.setup === name);
      li.querySelector(".in-use-mark").textContent = waits ? "chosen" : "in use";
    });
  }
  function listFile(file, setup) {
    // a file saved now joins the list as the page draws it (Use, and its setup's page)
    const list = document.getElementById("calibrate-files");
    if ([...list.children].some((li) => li.dataset.file === file)) return;
    const li = document.createElement("li");
    li.dataset.file = file;
    li.dataset.setup = setup;
    const mark = document.createElement("strong");
    Object.assign(mark, {className: "in-use-mark", textContent: "in use"});
    const use = document.createElement("button");
    Object.assign(use, {type: "button", className: "small", textContent: "Use"});
    use.dataset.use = file;
    const link = document.createElement("a");
    link.href = `/setups/${encodeURIComponent(setup)}`;
    link.textContent = "teach it, and what it learnt";
    li.append(file + (setup !== file ? ` (setup ${setup}) ` : " "), mark, " ", use, " ", link);
    list.appendChild(li);
  }
  document.getElementById("calibrate-use-none").addEventListener("click", async () => {
    const {r, data} = await post("/api/calibration/none");
    if (r && r.ok) await poll();
    result.textContent = r && r.ok ? "no calibration in use" : (data.message || "refused");
  });
  document.addEventListener("click", async (event) => {
    const name = event.target.dataset && event.target.dataset.use;
    if (!name) return;
    const {r, data} = await post("/api/calibration/use", {name});
    const stored = data.demo ? `chose ${data.active} (used once a real camera is attached)` : `using ${data.active}`;
    if (r && r.ok) await poll();
    result.textContent = r && r.ok ? stored : (data.message || "refused");
  });
})();
