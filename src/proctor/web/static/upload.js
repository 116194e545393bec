// The submission form: send the entry with a progress bar (bytes sent of the file's size).
// Loaded from /static (the Content-Security-Policy allows no inline script). The form works
// without it: the browser posts it as usual. With it, the answer's page (the submission, or
// the refusal saying what to fix) replaces this one when the upload is done.
"use strict";
(function () {
  const form = document.getElementById("submit-form");
  if (!form || !window.XMLHttpRequest || !window.FormData) return;
  const bar = document.getElementById("upload-progress");
  const status = document.getElementById("upload-status");
  const button = form.querySelector("button[type=submit]");
  const mib = (bytes) => (bytes / 1048576).toFixed(1) + " MiB";
  const say = (text) => {
    if (status) status.textContent = text;
  };
  const show = (request) => {
    if (request.responseURL && request.status < 400) {
      window.location.assign(request.responseURL);
      return;
    }
    // a refusal: its page says what to fix; keep this address so the form is one step back
    const page = new DOMParser().parseFromString(request.responseText, "text/html");
    const said = page.querySelector(".error");
    say(said ? said.textContent : "the upload was refused (" + request.status + ")");
    if (status) status.classList.add("error");
    if (bar) bar.hidden = true;
    if (button) button.disabled = false;
  };
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const request = new XMLHttpRequest();
    request.open("POST", form.action);
    request.upload.addEventListener("progress", (progress) => {
      if (!progress.lengthComputable || !bar) return;
      bar.max = progress.total;
      bar.value = progress.loaded;
      const share = Math.floor((100 * progress.loaded) / progress.total);
      say("uploading: " + share + "% (" + mib(progress.loaded) + " of " + mib(progress.total) + ")");
    });
    request.upload.addEventListener("load", () => say("uploaded; checking the entry…"));
    request.addEventListener("load", () => show(request));
    request.addEventListener("error", () => {
      say("the upload failed (connection lost): nothing was stored, send it again");
      if (button) button.disabled = false;
    });
    if (bar) {
      bar.hidden = false;
      bar.value = 0;
    }
    if (status) status.classList.remove("error");
    if (button) button.disabled = true;
    say("uploading…");
    request.send(new FormData(form));
  });
})();
