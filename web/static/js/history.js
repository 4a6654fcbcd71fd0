// The history on the server's own screen: "Delete this game" asks once ("Tap again to
// delete Qwixx: Ann, Bob from the history for good", tap_again.js) before its form is sent.
(() => {
  "use strict";
  const questions = window.TapAgain.questions(document, (button) => button.dataset.tableId);
  document.addEventListener("click", (event) => {
    const button = event.target.closest && event.target.closest("form.delete-game [data-confirm]");
    if (button && !questions.confirmed(button)) event.preventDefault();
  });
})();
