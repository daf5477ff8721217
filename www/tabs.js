// The dashboard's two tabs (simulation, live gateway): clicks, the arrow
// keys, and the mode remembered in the URL's hash.
const $ = (selector) => document.querySelector(selector);

/** The modes, in tab order. */
export const MODES = ["sim", "live"];

/** Shows `mode`'s tab and panel, hides the other one. */
export function showTab(mode) {
  for (const name of MODES) {
    const tab = $(`#tab-${name}`);
    tab.setAttribute("aria-selected", String(name === mode));
    tab.tabIndex = name === mode ? 0 : -1;
    $(`#mode-${name}`).hidden = name !== mode;
  }
}

function rememberMode(mode) {
  const url = new URL(location.href);
  url.searchParams.delete("mode");
  url.hash = mode === "live" ? "live" : "";
  history.replaceState(null, "", url);
}

/** Calls `select(mode)` when a tab is clicked (or reached with the arrow keys). */
export function onTab(select, current) {
  for (const mode of MODES) {
    $(`#tab-${mode}`).addEventListener("click", () => {
      rememberMode(mode);
      select(mode);
    });
  }
  $(".tabs").addEventListener("keydown", (event) => {
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    const next = current() === "sim" ? "live" : "sim";
    $(`#tab-${next}`).click();
    $(`#tab-${next}`).focus();
  });
}
