/* pr-digest archive: the light/dark toggle and the client-side search (no server, no other host).
   Untrusted text from the index is only ever inserted with textContent. */
(function () {
  "use strict";
  var root = document.body.getAttribute("data-root") || "";
  var html = document.documentElement;

  // --- theme toggle ---------------------------------------------------------------------------
  var toggle = document.getElementById("theme-toggle");
  var systemDark = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  function isDark() {
    var t = html.getAttribute("data-theme");
    return t ? t === "dark" : !!(systemDark && systemDark.matches);
  }
  function syncToggle() { toggle.setAttribute("aria-pressed", isDark() ? "true" : "false"); }
  if (toggle) {
    toggle.hidden = false;
    syncToggle();
    toggle.addEventListener("click", function () {
      var next = isDark() ? "light" : "dark";
      html.setAttribute("data-theme", next);
      try { localStorage.setItem("digest-theme", next); } catch (e) { /* not saved: fine */ }
      syncToggle();
    });
    if (systemDark && systemDark.addEventListener) systemDark.addEventListener("change", syncToggle);
  }

  // --- search -----------------------------------------------------------------------------------
  var results = document.getElementById("results");
  var input = document.getElementById("q");
  var status = document.getElementById("search-status");
  if (!results || !input || !status) return;
  var LIMIT = 100;
  var index = null, hay = null, loading = null;

  function load() {
    if (!loading) {
      status.textContent = results.getAttribute("data-loading");
      loading = fetch(root + "search-index.json", { credentials: "same-origin" })
        .then(function (r) { if (!r.ok) throw new Error(r.status); return r.json(); })
        .then(function (data) {
          index = data;
          hay = data.entries.map(function (e) {
            return (e[3] + "\n" + e[4] + "\n@" + e[5] + "\n#" + e[1]).toLowerCase();
          });
        });
    }
    return loading;
  }

  // How the page's language picks a count's form (prdigest.kernel.text.PLURAL_RULES; data-plural on #results).
  var RULES = {
    "one": function (n) { return n === 1 ? 0 : 1; },
    "zero-one": function (n) { return n === 0 || n === 1 ? 0 : 1; },
    "none": function () { return 0; }
  };

  function fill(template, values, rule) {
    // "{n|entry|entries}" agrees with n, as prdigest.kernel.text.Counted does for the pages
    var choose = RULES[rule] || RULES.one;
    return template
      .replace(/\{(\w+)((?:\|[^|{}]*)+)\}/g, function (m, k, forms) {
        if (!(k in values)) return m;
        var list = forms.slice(1).split("|"), value = String(values[k]).replace(/,/g, "").trim();
        var index = /^-?\d+$/.test(value) ? choose(parseInt(value, 10)) : list.length - 1;
        return list[Math.min(index, list.length - 1)];
      })
      .replace(/\{(\w+)\}/g, function (m, k) { return k in values ? values[k] : m; });
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function run(query) {
    var terms = query.toLowerCase().split(/\s+/).filter(Boolean);
    results.textContent = "";
    if (!terms.length) { status.textContent = ""; return; }
    var hits = [];
    for (var i = 0; i < hay.length; i++) {
      var h = hay[i], ok = true;
      for (var t = 0; t < terms.length && ok; t++) ok = h.indexOf(terms[t]) !== -1;
      if (ok) hits.push(i);
    }
    var text = hits.length ? fill(results.getAttribute("data-found"), { n: hits.length }, results.getAttribute("data-plural"))
                           : results.getAttribute("data-none");
    if (hits.length > LIMIT) text += " · " + fill(results.getAttribute("data-more"), { shown: LIMIT }, results.getAttribute("data-plural"));
    status.textContent = text;
    var frag = document.createDocumentFragment();
    hits.slice(0, LIMIT).forEach(function (i) {
      var e = index.entries[i], ed = index.editions[e[0]], verdict = index.verdicts[e[2]];
      var li = el("li", "hit");
      var badge = el("span", "badge b-" + verdict[0], verdict[1]);
      var link = el("a", null, e[3]);
      link.href = root + ed[0] + "index.html#pr-" + e[1];
      var info = el("span", "meta", "#" + e[1] + (e[4] ? " " + e[4] : "") + " · @" + e[5] + " · " + ed[1]);
      li.appendChild(badge); li.appendChild(document.createTextNode(" "));
      li.appendChild(link); li.appendChild(el("br")); li.appendChild(info);
      frag.appendChild(li);
    });
    results.appendChild(frag);
  }

  function search() {
    var query = input.value;
    var url = new URL(window.location.href);
    if (query) url.searchParams.set("q", query); else url.searchParams.delete("q");
    try { history.replaceState(null, "", url); } catch (e) { /* file:// may refuse: harmless */ }
    load().then(function () { if (input.value === query) run(query); },
                function () { status.textContent = results.getAttribute("data-error"); });
  }

  var timer = null;
  input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(search, 120); });
  input.form.addEventListener("submit", function (ev) { ev.preventDefault(); clearTimeout(timer); search(); });
  var initial = new URLSearchParams(window.location.search).get("q");
  if (initial) { input.value = initial; search(); }
})();
