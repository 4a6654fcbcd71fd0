// A fetch that gives up. On a café's Wi-Fi that carries nothing (no `offline` event, no
// answer, no close) a plain fetch waits for the minutes the browser allows: a page that
// awaits it (the camera's picture loop, a tap sent again over HTTP) stops with it, and its
// dead connection holds one of the browser's few per host, so later fetches queue behind
// it even once the Wi-Fi carries again. fetchWithin aborts after `ms` (the answer's body
// included); its promise then rejects with a TimeoutError, which a caller tells apart from
// a network that refused at once (a TypeError): a request that timed out may have reached
// the table, only its answer did not come back.
(() => {
  "use strict";
  const ANSWER_MS = 8000;

  function fetchWithin(url, options, ms) {
    const unanswered = new AbortController();
    const noAnswer = () => unanswered.abort(new DOMException("no answer from the table", "TimeoutError"));
    setTimeout(noAnswer, ms || ANSWER_MS); // once answered and read, aborting does nothing
    return fetch(url, {...(options || {}), signal: unanswered.signal});
  }

  window.fetchWithin = fetchWithin;
  window.timedOut = (error) => Boolean(error && error.name === "TimeoutError");
})();
