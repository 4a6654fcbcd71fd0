// The #toast live region's words (table.js' and camera.js' refusals) stay until the player
// moves on: a tap or click anywhere (the toast itself included), or Escape. They went by a
// 4 s timer, too short to read for some (WCAG 2.2.1). A tap clears them before the page
// acts on it, so a refusal it brings is shown alone, never piled under an old one.
(() => {
  "use strict";
  const toast = document.getElementById("toast");
  if (!toast) return;
  function dismiss() { toast.textContent = ""; } // the region stays (base.html): its words go
  // capture: before the tapped control's own handler, whose answer may be a new refusal
  document.addEventListener("click", dismiss, true);
  document.addEventListener("keydown", (event) => { if (event.key === "Escape") dismiss(); });
})();
