// xstack's bench site: a trial's page. Plays the agent's terminal (asciinema-player on the
// cast in cast.js) with a button per marker (phase changes, verdicts) that seeks to it; a
// link to a run log opens it.
"use strict";
// A link to a closed run log (#log-N) opens it.
(function () {
  function openTarget() {
    const target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if (target && target.tagName === "DETAILS") target.open = true;
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
(function () {
  const root = document.getElementById("player");
  if (!root || window.XSTACK_CAST === undefined || !window.AsciinemaPlayer) return;
  const player = window.AsciinemaPlayer.create({ data: window.XSTACK_CAST }, root, {
    fit: "width",
    terminalFontFamily: "ui-monospace, 'DejaVu Sans Mono', monospace",
  });
  window.xstackPlayer = player;
  const markers = document.getElementById("markers");
  (window.XSTACK_MARKERS || []).forEach(([time, label], index) => {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = label;
    button.title = time.toFixed(1) + " s";
    button.dataset.marker = String(index);
    button.dataset.time = String(time);
    button.addEventListener("click", () => {
      player.seek({ marker: index }).then(() => player.play());
    });
    markers.appendChild(button);
  });
})();
