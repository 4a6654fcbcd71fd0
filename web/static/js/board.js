// The scoreboard (a laptop or TV): every sheet at once, without scrolling. Tries each
// column count, lays the sheets out at their design width, measures the real layout and
// keeps the count that allows the largest scale; the whole grid is then zoomed to it.
// Runs again after every redraw (table.js swaps #live) and when the window changes size.
// A redraw is fitted in the mutation callback itself, a microtask before the next paint or
// task, so nobody (a viewer, a test) ever sees the new grid at its unzoomed size.
(() => {
  "use strict";
  const live = document.getElementById("live");
  if (!live || !document.body.classList.contains("page-board")) return;
  const MARGIN = 8;
  const MAX_ZOOM = 2;

  function layout(grid, columns) {
    grid.style.gridTemplateColumns = `repeat(${columns}, var(--board-sheet-w))`;
    const box = grid.getBoundingClientRect(); // the grid is as wide as its columns (CSS)
    return {width: box.width, height: box.height};
  }

  function fit() {
    const grid = live.querySelector(".sheets");
    if (!grid) return;
    // a finished game's board shows its final scores table instead (companion.css)
    if (!grid.getClientRects().length) {
      document.body.dataset.boardFitted = "yes";
      return;
    }
    grid.style.zoom = "1";
    grid.style.removeProperty("--board-sheet-w");
    const count = grid.children.length;
    // a sheet wider than the design width (Sixto's target area) gets the width it needs;
    // so does one whose rows overflow into its padding (a Qwixx or Sixto row's score stood
    // past the row's border): the sheet itself did not overflow, its parts did
    layout(grid, 1);
    const sheets = Array.from(grid.children);
    const overflow = (el) => el.scrollWidth - el.clientWidth;
    const parts = (s) => [s, ...s.querySelectorAll(":scope > *, [class*='-row']")];
    const wanted = Math.max(...sheets.map((s) => Math.max(...parts(s).map(overflow))));
    if (wanted > 0) {
      const width = sheets[0].getBoundingClientRect().width + wanted + 4;
      grid.style.setProperty("--board-sheet-w", `${Math.ceil(width)}px`);
    }
    const box = grid.getBoundingClientRect();
    const top = box.top + window.scrollY;
    // whatever the page has under the grid (paddings, a card) stays on screen too
    const below = Math.max(0, document.scrollingElement.scrollHeight - (box.bottom + window.scrollY));
    // what comes above the grid may leave it too little of the screen's height, or none
    // (the end card on a phone): the sheets then fit the width, one under the other, and
    // the page scrolls down to them, never sideways
    const height = window.innerHeight - top - below - 2;
    const room = {
      width: document.documentElement.clientWidth - 2 * MARGIN,
      height: height >= window.innerHeight / 4 ? height : Infinity,
    };
    let best = {zoom: 0, columns: 1};
    for (let columns = 1; columns <= Math.max(1, count); columns += 1) {
      const size = layout(grid, columns);
      const zoom = Math.min(room.width / size.width, room.height / size.height);
      if (zoom > best.zoom + 1e-3) best = {zoom, columns};
    }
    layout(grid, best.columns);
    grid.style.zoom = String(Math.min(best.zoom, MAX_ZOOM));
    grid.dataset.columns = String(best.columns);
    document.body.dataset.boardFitted = "yes";
  }

  let pending = 0;
  function later() {
    cancelAnimationFrame(pending);
    pending = requestAnimationFrame(fit);
  }

  // the host played the game again: the TV across the room follows to the next game's
  // scoreboard by itself (nobody walks up to tap "Next game ready"); refused, the button
  // stays for a tap
  let following = false;
  function followNextGame() {
    if (following || !live.querySelector("[data-next-seat]")) return;
    following = true;
    const tableId = document.querySelector(".board-page").dataset.tableId;
    fetch(`/api/tables/${tableId}/next_seat`, {method: "POST", credentials: "same-origin"})
      .then((r) => (r.ok ? r.json() : Promise.reject(r)))
      .then((data) => location.assign(`/t/${data.table_id}/board`))
      .catch(() => {});
  }

  new MutationObserver(fit).observe(live, {childList: true});
  new MutationObserver(followNextGame).observe(live, {childList: true});
  // the connection line grows (offline, its red box) and shrinks above the sheets: fit again
  const conn = document.getElementById("conn");
  if (conn) new MutationObserver(later).observe(conn, {attributes: true, childList: true, characterData: true});
  window.addEventListener("resize", later);
  fit();
  followNextGame();
})();
