// The lab's words in the visitor's language. base.html loads Django's JavaScript catalogue
// (/jsi18n/, lab/urls.py: the catalogue of the language the page was rendered in) before the
// lab's modules; it defines `django.gettext` and `django.ngettext`. Should it not have loaded,
// every string stays the English it was written in: the page works the same, in English.
//
// The strings are written in the modules as `gettext("...")` calls with plain string literals
// (that is what `manage.py makemessages -d djangojs` collects into locale/*/djangojs.po), their
// values as named placeholders: interpolate(gettext("broker %(id)s"), { id: 2 }).

function catalogue() {
  const django = globalThis.django;
  return django && typeof django.gettext === "function" && typeof django.ngettext === "function" ? django : null;
}

export function gettext(msgid) {
  const found = catalogue();
  return found ? found.gettext(msgid) : msgid;
}

export function ngettext(singular, plural, count) {
  const found = catalogue();
  return found ? found.ngettext(singular, plural, count) : (count === 1 ? singular : plural);
}

// "%(name)s" → values.name; a placeholder without a value stays as it is (never "undefined").
export function interpolate(format, values = {}) {
  return String(format).replace(/%\((\w+)\)s/g, (whole, name) => (values[name] === undefined ? whole : String(values[name])));
}

// The page's language ("en", "zh-hans"): <html lang>, which base.html sets from Django's.
export function pageLanguage() {
  return document.documentElement.lang || "en";
}
