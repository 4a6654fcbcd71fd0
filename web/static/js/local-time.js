// Times the server writes in UTC (<time datetime=... data-local>) shown in this browser's
// own time zone and language: the history and the games in progress.
(() => {
  "use strict";
  const format = new Intl.DateTimeFormat(undefined, {dateStyle: "medium", timeStyle: "short"});
  document.querySelectorAll("time[data-local]").forEach((element) => {
    const moment = new Date(element.getAttribute("datetime"));
    if (Number.isNaN(moment.getTime())) return;
    element.textContent = format.format(moment);
    element.title = element.getAttribute("datetime");
  });
})();
