// "Tap again to ...": a button with data-confirm (a pass that costs a penalty, freeing a
// seat, ending the game, forgetting a setup's dice) asks once. The first tap turns it into
// its question (its data-confirm text, class "armed") for a few seconds; a second tap does
// it. No window.confirm: kiosk browsers may suppress native dialogs. Shared by table.js,
// setup.js and camera.js; load it before them.
//
// A finger's second tap that comes too soon to have read the question (a double tap) does
// not confirm: the question stays. The armed button says which it is in data-armed:
// "asking" while such a tap would still be dropped, "ready" once a tap does it.
//
// The question is kept by key, not by element: a page whose buttons are redrawn (the
// table's live fragment) calls restore() after each redraw and the question comes back on
// the new button of the same key.
//
// A page may name another attribute for its question (camera.js: data-ask-first on "Use
// this roll", so table.js's data-confirm questions never touch it). A button whose
// question is empty does not ask: a tap does it at once.
//
// A button with data-ask-stays (the roll that closes a choice: a player who looked away
// would see the question gone and think the tap did nothing) keeps its question with no
// time limit: until a tap elsewhere, or until the page's state (`stateOf()`, when the page
// gives one) is another than when it asked.
//
// A keyboard or screen-reader player hears the question (an assertive live region: the
// button's new text alone is not read out), and a question asked by a key press keeps no
// time limit either: 5 s is less than it takes to hear it and press again. It ends when the
// focus leaves its button (or a tap elsewhere, or the page's state changes).
//
// A button with data-ask-beside (a Qwixx box whose cross ends the game: a padlock icon, or
// a number in a box too small for a sentence) keeps its contents: it is marked armed, and
// the question shows in a line beside it instead, in the place the page names
// (`lineIn(button)`: table.js, the sticky banner, seen however the sheet is scrolled and
// turned) or else right after the button. The line is for the eyes (aria-hidden): the
// live region above says the question.
//
// A redraw (restore()) ends a question no longer in the air, and empties the live region:
// its button gone or hidden (and no other of its key shown), a key's question whose focus
// the redraw dropped (no focus event says so), a staying question whose state is past. It
// stays when the redraw gives the focus to the new button of its key.
window.TapAgain = (() => {
  "use strict";
  const ASK_MS = 5000;
  const READ_MS = 500;
  let pointerType = "mouse";
  let byKeyboard = false;  // whether the latest press was a key's (Enter, Space), not a pointer's
  document.addEventListener("pointerdown", (event) => {
    pointerType = event.pointerType;
    byKeyboard = false;
  }, true);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") byKeyboard = true;
  }, true);

  // one live region for every question of the page, there before the first question (a
  // region added with its words is not read)
  let spoken = null;
  function say(words) {
    if (spoken === null) {
      spoken = document.createElement("p");
      spoken.className = "sr-only";
      spoken.dataset.tapAgainSaid = "";
      spoken.setAttribute("aria-live", "assertive");
      document.body.appendChild(spoken);
    }
    spoken.textContent = words;
  }

  // the questions of the buttons inside `scope` whose `attribute` (default data-confirm)
  // holds one; `keyOf(button)` names a button across redraws (default: its question)
  // `lineIn(button)`: where a data-ask-beside button's question shows (see the top)
  function questions(scope, keyOf, attribute = "data-confirm", stateOf = () => null, lineIn = () => null) {
    const question = (element) => element.getAttribute(attribute) || "";
    const key = keyOf || question;
    const armed = {key: null, at: 0, until: 0, timers: [], stays: false, byKey: false, state: null};
    say("");

    const line = document.createElement("p");
    line.className = "ask-beside";
    line.setAttribute("aria-hidden", "true");

    // the line shows the question of the armed data-ask-beside button (the first shown of
    // its key: a Qwixx row's last number and its lock send the same cross), else it goes
    function showBeside() {
      const asking = Array.from(scope.querySelectorAll(`[${attribute}][data-ask-beside]`)).find(
        (element) => element.classList.contains("armed") && element.getClientRects().length);
      if (!asking) {
        line.remove();
        return;
      }
      line.textContent = question(asking);
      const place = lineIn(asking);
      if (place) place.append(line);
      else asking.after(line);
    }

    function isArmed(element) {
      if (question(element) === "" || armed.key !== key(element)) return false;
      return armed.stays ? stateOf() === armed.state : Date.now() < armed.until;
    }

    // whether the question asked is still in the air (see the top)
    function stillAsked() {
      if (armed.stays ? stateOf() !== armed.state : Date.now() >= armed.until) return false;
      const shown = Array.from(scope.querySelectorAll(`[${attribute}]`)).filter((element) =>
        question(element) !== "" && key(element) === armed.key && element.getClientRects().length);
      return shown.length > 0 && (!armed.byKey || shown.includes(document.activeElement));
    }

    function restore() {
      if (armed.key !== null && !stillAsked()) end();
      const now = Date.now();
      scope.querySelectorAll(`[${attribute}]`).forEach((element) => {
        const on = isArmed(element);
        element.classList.toggle("armed", on);
        if (!element.hasAttribute("data-ask-beside")) {
          if (element.dataset.label === undefined) element.dataset.label = element.textContent;
          element.textContent = on ? question(element) : element.dataset.label;
        }
        if (on) element.dataset.armed = now - armed.at < READ_MS ? "asking" : "ready";
        else delete element.dataset.armed;
      });
      showBeside();
    }

    function setTimers(...timers) {
      armed.timers.forEach(clearTimeout);
      armed.timers = timers;
    }

    // the question ends, and nothing is left of it in the live region
    function end() {
      if (armed.key !== null) say("");
      armed.key = null;
      setTimers();
    }

    function disarm() {
      end();
      restore();
    }

    function arm(element) {
      armed.key = key(element);
      armed.at = Date.now();
      armed.until = armed.at + ASK_MS;
      armed.byKey = byKeyboard;
      armed.stays = byKeyboard || element.hasAttribute("data-ask-stays");
      armed.state = stateOf();
      const ready = setTimeout(restore, READ_MS);  // "asking" becomes "ready"
      setTimers(ready, ...(armed.stays ? [] : [setTimeout(disarm, ASK_MS)]));
      restore();
      say(question(element));
    }

    // a staying question ends at a tap, or the focus, anywhere but on its own button (a
    // redraw that gives the focus back to the new button of its key keeps it)
    function endUnlessOnIt(event) {
      if (armed.key === null || !armed.stays) return;
      const on = event.target.closest && event.target.closest(`[${attribute}]`);
      if (!on || !scope.contains(on) || key(on) !== armed.key) disarm();
    }
    document.addEventListener("pointerdown", endUnlessOnIt, true);
    document.addEventListener("focusin", endUnlessOnIt, true);

    // whether this tap on a button of these questions does what it says: false for the tap
    // that asks, and for a finger's second tap too soon after it
    function confirmed(element) {
      if (question(element) === "") return true;
      if (!isArmed(element)) {
        arm(element);
        return false;
      }
      if (pointerType === "touch" && Date.now() - armed.at < READ_MS) return false;
      disarm();
      return true;
    }

    return {confirmed, restore};
  }

  return {questions, pointerType: () => pointerType};
})();
