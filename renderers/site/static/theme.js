/* pr-digest archive: apply the reader's saved light/dark choice before the page paints. */
(function () {
  try {
    var saved = localStorage.getItem("digest-theme");
    if (saved === "dark" || saved === "light") document.documentElement.setAttribute("data-theme", saved);
  } catch (e) { /* storage disabled: follow the system setting */ }
})();
