// A running submission's page: poll its status (JSON) and show its stage and case count live.
// Loaded from /static (the Content-Security-Policy allows no inline script); when the
// evaluation ends the page reloads to show the report.
"use strict";
(function () {
  const live = document.getElementById("live");
  if (!live) return;
  const url = live.dataset.url;
  const everyMs = Number(live.dataset.everyMs) || 1000;
  const show = (id, text) => {
    const element = document.getElementById(id);
    if (element && element.textContent !== text) element.textContent = text;
  };
  const poll = async () => {
    let state;
    try {
      const answer = await fetch(url, { credentials: "same-origin", cache: "no-store" });
      if (!answer.ok) throw new Error(String(answer.status));
      state = await answer.json();
    } catch (problem) {
      show("live-note", "status not reachable; retrying");
      window.setTimeout(poll, everyMs * 3);
      return;
    }
    show("status", state.status);
    show("stage", state.stage_text);
    show("cases", state.cases_text);
    show("live-note", "");
    if (state.finished) {
      window.location.reload();
      return;
    }
    window.setTimeout(poll, everyMs);
  };
  window.setTimeout(poll, everyMs);
})();
