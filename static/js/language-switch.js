// The header's language switch (base.html) posts to Django's set_language with `next`, the page to
// come back to. The template wrote the address the page was served at; a page may have changed it
// since (a session page drops the landing card's start options once it has acted on them, so that
// coming back does not act on them again): send the address as it is now.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!(form instanceof HTMLFormElement) || !form.matches("[data-language-switch]")) return;
  const next = form.elements.namedItem("next");
  if (next) next.value = window.location.pathname + window.location.search + window.location.hash;
});
