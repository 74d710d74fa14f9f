// The convoeval labelling page (convoeval/labelling/page.py writes it; docs/agreement.md, "The labelling page").
// Every element is built with textContent: the transcript is untrusted and never becomes markup.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("label-data").textContent);
  var CONVS = DATA.conversations;
  var KEY = "convoeval-labels:" + DATA.id;  // one page, one store: two pages never share progress
  var LABELS = { p: "pass", f: "fail", u: "unsure" };
  var state = load();
  var els = {};

  // ---------- storage ----------
  function fresh() { return { v: 1, rater: "", labels: {}, conv: 0, crit: 0 }; }
  var storageOk = true;
  function load() {
    try {
      var raw = window.localStorage.getItem(KEY);
      if (raw) {
        var s = JSON.parse(raw);
        if (s && s.v === 1 && s.labels) return s;
      }
    } catch (e) { storageOk = false; }
    return fresh();
  }
  function save() {
    try {
      window.localStorage.setItem(KEY, JSON.stringify(state));
      storageOk = true;
    } catch (e) { storageOk = false; }
    renderStatus();
  }

  // ---------- small DOM helpers ----------
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function kbd(text) { return el("kbd", null, text); }

  function conv() { return CONVS[state.conv]; }
  function entry(c, index, create) {
    var byConv = state.labels[c.id];
    if (!byConv) { if (!create) return null; byConv = state.labels[c.id] = {}; }
    var e = byConv[index];
    if (!e && create) e = byConv[index] = { label: "", note: "" };
    return e || null;
  }
  function doneIn(c) {
    var n = 0;
    c.criteria.forEach(function (k) { var e = entry(c, k.index, false); if (e && e.label) n += 1; });
    return n;
  }
  function totals() {
    var done = 0, all = 0;
    CONVS.forEach(function (c) { done += doneIn(c); all += c.criteria.length; });
    return { done: done, all: all };
  }

  // ---------- layout (built once) ----------
  function build() {
    var root = el("div", "app");
    var head = el("header", "top");
    var titleBox = el("div", "title");
    titleBox.appendChild(el("h1", null, "Label the conversations"));
    titleBox.appendChild(el("div", "sub", "Run: " + DATA.source + " · " + CONVS.length + " conversation(s) · page " +
      DATA.id + " · made " + DATA.created));
    head.appendChild(titleBox);
    var rater = el("label", "rater");
    rater.appendChild(el("span", null, "Your name "));
    els.raterInput = el("input");
    els.raterInput.id = "rater";
    els.raterInput.type = "text";
    els.raterInput.autocomplete = "name";
    els.raterInput.placeholder = "e.g. ana";
    els.raterInput.value = state.rater;
    els.raterInput.addEventListener("input", function () { state.rater = els.raterInput.value.trim(); save(); });
    rater.appendChild(els.raterInput);
    head.appendChild(rater);
    els.progress = el("div", "progress");
    els.progressBar = el("div", "bar");
    els.progressFill = el("div", "fill");
    els.progressBar.appendChild(els.progressFill);
    els.progressText = el("div", "ptext");
    els.progress.appendChild(els.progressText);
    els.progress.appendChild(els.progressBar);
    head.appendChild(els.progress);
    var actions = el("div", "actions");
    els.exportBtn = el("button", "export", "Export CSV");
    els.exportBtn.id = "export";
    els.exportBtn.title = "Download the labels as a CSV file (key: e)";
    els.exportBtn.addEventListener("click", function () { exportCsv(false); });
    var helpBtn = el("button", "help", "? Keys");
    helpBtn.addEventListener("click", function () { toggleHelp(true); });
    actions.appendChild(els.exportBtn);
    actions.appendChild(helpBtn);
    head.appendChild(actions);
    root.appendChild(head);

    els.nav = el("nav", "convnav");
    root.appendChild(els.nav);

    var main = el("main", "main");
    els.chat = el("section", "chat");
    els.chat.setAttribute("aria-label", "Transcript");
    els.panel = el("section", "panel");
    els.panel.setAttribute("aria-label", "Criteria");
    main.appendChild(els.chat);
    main.appendChild(els.panel);
    root.appendChild(main);

    var foot = el("footer", "keys");
    [["p", "pass"], ["f", "fail"], ["u", "unsure"], ["j / ↓", "next criterion"], ["k / ↑", "previous"],
     ["n / Enter", "note"], ["] / →", "next conversation"], ["[ / ←", "previous conversation"],
     ["e", "export CSV"], ["?", "all keys"]].forEach(function (pair) {
      var item = el("span", "key");
      item.appendChild(kbd(pair[0]));
      item.appendChild(document.createTextNode(" " + pair[1]));
      foot.appendChild(item);
    });
    els.status = el("span", "status");
    els.status.id = "status";
    foot.appendChild(els.status);
    root.appendChild(foot);

    els.help = buildHelp();
    root.appendChild(els.help);
    els.ask = buildAsk();
    root.appendChild(els.ask);
    els.pending = buildPending();
    root.appendChild(els.pending);
    document.body.appendChild(root);
  }

  function buildHelp() {
    var overlay = el("div", "overlay hidden");
    overlay.id = "help";
    var box = el("div", "dialog");
    box.appendChild(el("h2", null, "Keyboard"));
    var table = el("table");
    [["p", "the highlighted criterion holds: pass (then the next criterion)"],
     ["f", "it does not hold: fail"],
     ["u", "you cannot tell from this conversation: unsure"],
     ["Backspace / Delete", "clear the label"],
     ["j or ↓", "next criterion"], ["k or ↑", "previous criterion"],
     ["n or Enter", "write a note on the criterion; Enter or Esc when done"],
     ["] or →", "next conversation"], ["[ or ←", "previous conversation"],
     ["g", "next conversation with unlabelled criteria"],
     ["t", "show or hide what the agent's tools were given and returned"],
     ["e", "export the labels as CSV"], ["?", "this help; Esc closes it"]].forEach(function (row) {
      var tr = el("tr");
      var th = el("th");
      th.appendChild(kbd(row[0]));
      tr.appendChild(th);
      tr.appendChild(el("td", null, row[1]));
      table.appendChild(tr);
    });
    box.appendChild(table);
    box.appendChild(el("p", null, "Your labels are saved in this browser as you go (close and reopen the file: " +
      "they are still here). When you are done, press Export CSV and send the file back."));
    box.appendChild(el("p", null, "A criterion is judged from the conversation alone: does it hold for what the " +
      "agent said and did (the tools it called are shown under its messages)?"));
    var close = el("button", null, "Close (Esc)");
    close.addEventListener("click", function () { toggleHelp(false); });
    box.appendChild(close);
    overlay.appendChild(box);
    return overlay;
  }

  function buildPending() {
    var overlay = el("div", "overlay hidden");
    overlay.id = "pending";
    var box = el("div", "dialog");
    box.appendChild(el("h2", null, "Notes without a verdict"));
    box.appendChild(el("p", null, "A label needs a verdict: pass (p), fail (f) or unsure (u) when you cannot tell. " +
      "These criteria have your note but no verdict, so the export would leave them out:"));
    box.appendChild(el("ul", "plist"));
    var go = el("button", "primary", "Give them a verdict (Enter)");
    go.addEventListener("click", function () { closePending(true); });
    var anyway = el("button", null, "Export without them");
    anyway.id = "export-anyway";
    anyway.addEventListener("click", function () { closePending(false); exportCsv(true); });
    box.appendChild(go);
    box.appendChild(document.createTextNode(" "));
    box.appendChild(anyway);
    overlay.appendChild(box);
    overlay.addEventListener("keydown", function (ev) {
      if (ev.key === "Escape") { ev.preventDefault(); closePending(false); }
      ev.stopPropagation();
    });
    return overlay;
  }

  function buildAsk() {
    var overlay = el("div", "overlay hidden");
    overlay.id = "ask";
    var box = el("div", "dialog");
    box.appendChild(el("h2", null, "Who is labelling?"));
    box.appendChild(el("p", null, "Your name goes into the exported file, so your labels can be told from " +
      "other people's. It is asked once."));
    var input = el("input");
    input.type = "text";
    input.id = "ask-name";
    input.placeholder = "e.g. ana";
    box.appendChild(input);
    var ok = el("button", "primary", "Start labelling (Enter)");
    function done() {
      var name = input.value.trim();
      if (!name) { input.focus(); return; }
      state.rater = name;
      els.raterInput.value = name;
      save();
      overlay.classList.add("hidden");
      input.blur();
      render();
    }
    ok.addEventListener("click", done);
    input.addEventListener("keydown", function (ev) {
      if (ev.key === "Enter") { ev.preventDefault(); done(); }
      ev.stopPropagation();
    });
    box.appendChild(ok);
    overlay.appendChild(box);
    return overlay;
  }

  // ---------- rendering ----------
  function renderNav() {
    var nav = els.nav;
    nav.textContent = "";
    var prev = el("button", "step", "[ previous");
    prev.title = "previous conversation";
    prev.addEventListener("click", function () { goConv(state.conv - 1); });
    var next = el("button", "step", "next ]");
    next.title = "next conversation";
    next.addEventListener("click", function () { goConv(state.conv + 1); });
    var c = conv();
    var where = el("div", "where");
    where.appendChild(el("strong", null, "Conversation " + (state.conv + 1) + " of " + CONVS.length));
    where.appendChild(el("span", "convkey", c.key));
    if (c.stratum && c.stratum !== "all" && c.stratum !== c.scenario) where.appendChild(el("span", "stratum", c.stratum));
    nav.appendChild(prev);
    nav.appendChild(where);
    nav.appendChild(next);
    var dots = el("div", "dots");
    CONVS.forEach(function (other, i) {
      var d = el("button", "dot");
      var n = doneIn(other);
      if (n === other.criteria.length) d.classList.add("full");
      else if (n > 0) d.classList.add("part");
      if (i === state.conv) d.classList.add("here");
      d.title = "conversation " + (i + 1) + ": " + n + "/" + other.criteria.length + " labelled";
      d.textContent = String(i + 1);
      d.addEventListener("click", function () { goConv(i); });
      dots.appendChild(d);
    });
    nav.appendChild(dots);
  }

  // WhatsApp's own formatting, as the patient saw it: *bold* and _italic_. Built from text nodes, never markup.
  // Like WhatsApp, only at word edges: snake_case and 2*3*4 stay as they are.
  var FORMAT = /(^|[\s(.,;:!?"'])(?:\*([^\s*](?:[^*\n]*[^\s*])?)\*|_([^\s_](?:[^_\n]*[^\s_])?)_)(?=$|[\s).,;:!?"'])/g;
  function bubble(text) {
    var div = el("div", "bubble");
    var last = 0, m;
    FORMAT.lastIndex = 0;
    while ((m = FORMAT.exec(text)) !== null) {
      var start = m.index + m[1].length;
      if (start > last) div.appendChild(document.createTextNode(text.slice(last, start)));
      div.appendChild(el(m[2] !== undefined ? "strong" : "em", null, m[2] !== undefined ? m[2] : m[3]));
      last = FORMAT.lastIndex;
    }
    if (last < text.length) div.appendChild(document.createTextNode(text.slice(last)));
    return div;
  }

  function renderChat() {
    var c = conv();
    var chat = els.chat;
    chat.textContent = "";
    chat.appendChild(el("div", "scenario", "Scenario: " + c.scenario));
    if (c.patient && c.patient.length) {
      // The simulated patient broke: the labeller must know, or a criterion the patient made moot reads as the agent's.
      var warn = el("div", "patientwarn");
      warn.appendChild(el("strong", null, "The simulated patient broke in this conversation"));
      var list = el("ul");
      c.patient.forEach(function (line) { list.appendChild(el("li", null, line)); });
      warn.appendChild(list);
      warn.appendChild(el("div", null, "Judge what the agent did with what it was given; where the patient's " +
        "behaviour makes a criterion impossible to judge, label it unsure (u)."));
      chat.appendChild(warn);
    }
    var lastTurn = null;
    c.messages.forEach(function (m) {
      if (m.turn !== null && m.turn !== lastTurn) {
        chat.appendChild(el("div", "turn", "turn " + m.turn));
        lastTurn = m.turn;
      }
      var side = m.role === "patient" ? "patient" : "agent";
      var group = el("div", "msg " + side);
      group.appendChild(el("div", "who", side === "patient" ? "Patient" : "Agent"));
      m.bubbles.forEach(function (b) { group.appendChild(bubble(b)); });
      m.tools.forEach(function (t) {
        var d = el("details", "tool");
        d.appendChild(el("summary", null, "tool: " + t.name));
        d.appendChild(el("div", "tlabel", "arguments"));
        d.appendChild(el("pre", null, t.arguments));
        d.appendChild(el("div", "tlabel", "result"));
        d.appendChild(el("pre", null, t.result));
        group.appendChild(d);
      });
      chat.appendChild(group);
    });
  }

  function renderPanel() {
    var c = conv();
    var panel = els.panel;
    panel.textContent = "";
    var n = doneIn(c);
    var head = el("div", "phead");
    head.appendChild(el("h2", null, "Conversation " + (state.conv + 1) + " of " + CONVS.length +
      ": does each criterion hold?"));
    head.appendChild(el("span", "count", n + " of " + c.criteria.length + " labelled"));
    panel.appendChild(head);
    var how = el("p", "how");
    how.appendChild(document.createTextNode("Read the conversation, then for the highlighted criterion press "));
    how.appendChild(kbd("p"));
    how.appendChild(document.createTextNode(" it holds, "));
    how.appendChild(kbd("f"));
    how.appendChild(document.createTextNode(" it does not, "));
    how.appendChild(kbd("u"));
    how.appendChild(document.createTextNode(" cannot tell."));
    panel.appendChild(how);
    c.criteria.forEach(function (k, i) {
      var e = entry(c, k.index, false) || { label: "", note: "" };
      var card = el("div", "crit");
      card.id = "crit-" + i;
      if (i === state.crit) card.classList.add("current");
      if (e.label) card.classList.add("is-" + e.label);
      if (e.note && !e.label) card.classList.add("note-only");
      card.addEventListener("click", function (ev) {
        if (ev.target.tagName === "BUTTON" || ev.target.tagName === "TEXTAREA") return;
        state.crit = i; save(); renderPanel();
      });
      var top = el("div", "ctop");
      top.appendChild(el("span", "num", String(i + 1)));
      top.appendChild(el("span", "ctext", k.text));
      var pending = el("span", "pending", "note, no verdict yet");
      if (e.note && !e.label) top.appendChild(pending);
      card.appendChild(top);
      var row = el("div", "choices");
      ["p", "f", "u"].forEach(function (key) {
        var label = LABELS[key];
        var b = el("button", "choice " + label);
        b.appendChild(kbd(key));
        b.appendChild(document.createTextNode(" " + label));
        if (e.label === label) { b.classList.add("on"); b.setAttribute("aria-pressed", "true"); }
        b.addEventListener("click", function () { state.crit = i; setLabel(label, false); });
        row.appendChild(b);
      });
      card.appendChild(row);
      var note = el("textarea", "note");
      if (i !== state.crit && !e.note) card.classList.add("no-note");  // a note box only where it is wanted
      note.rows = 1;
      note.placeholder = i === state.crit ? "note (press n) — why, what you saw" : "note";
      note.value = e.note || "";
      note.addEventListener("focus", function () {
        if (state.crit !== i) { state.crit = i; markCurrent(); }
      });
      note.addEventListener("input", function () {
        var saved = entry(c, k.index, true);
        saved.note = note.value;
        save();
        // In place, not by rendering the panel again: a click on a verdict right after typing must land.
        var waiting = !!saved.note && !saved.label;
        card.classList.toggle("note-only", waiting);
        if (waiting && !pending.parentNode) top.appendChild(pending);
        if (!waiting && pending.parentNode) pending.remove();
      });
      note.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" && !ev.shiftKey || ev.key === "Escape") { ev.preventDefault(); note.blur(); }
        ev.stopPropagation();  // typing a note never triggers a shortcut
      });
      card.appendChild(note);
      panel.appendChild(card);
    });
    if (n === c.criteria.length) {
      var msg = state.conv + 1 < CONVS.length ? "All criteria labelled. Press ] for the next conversation."
        : "All criteria of the last conversation labelled. Press e to export.";
      panel.appendChild(el("div", "donemsg", msg));
    }
  }

  function markCurrent() {
    var cards = els.panel.querySelectorAll(".crit");
    for (var i = 0; i < cards.length; i++) {
      cards[i].classList.toggle("current", i === state.crit);
      var note = cards[i].querySelector("textarea");
      cards[i].classList.toggle("no-note", i !== state.crit && !note.value);
    }
    var cur = document.getElementById("crit-" + state.crit);
    if (cur && cur.scrollIntoView) cur.scrollIntoView({ block: "nearest" });
  }

  function renderStatus() {
    if (!els.progressText) return;
    var t = totals();
    els.progressText.textContent = t.done + " of " + t.all + " criteria labelled";
    els.progressFill.style.width = (t.all ? (100 * t.done / t.all) : 0) + "%";
    els.status.textContent = storageOk ? "saved in this browser" :
      "this browser does not keep progress here: export before closing";
    els.status.classList.toggle("warn", !storageOk);
  }

  function render() {
    renderNav();
    renderChat();
    renderPanel();
    renderStatus();
    markCurrent();
  }

  // ---------- actions ----------
  function setLabel(label, advance) {
    var c = conv();
    var k = c.criteria[state.crit];
    if (!k) return;
    entry(c, k.index, true).label = label;
    if (advance && state.crit + 1 < c.criteria.length) state.crit += 1;
    save();
    renderPanel();
    renderNav();
    markCurrent();
  }
  function clearLabel() {
    var c = conv();
    var k = c.criteria[state.crit];
    var e = k && entry(c, k.index, false);
    if (e) { e.label = ""; save(); renderPanel(); renderNav(); markCurrent(); }
  }
  function moveCrit(step) {
    var n = conv().criteria.length;
    state.crit = Math.max(0, Math.min(n - 1, state.crit + step));
    save();
    markCurrent();
  }
  function goConv(i) {
    if (i < 0 || i >= CONVS.length || i === state.conv) return;
    state.conv = i;
    state.crit = 0;
    var c = conv();
    for (var j = 0; j < c.criteria.length; j++) {  // start at the first unlabelled criterion
      var e = entry(c, c.criteria[j].index, false);
      if (!e || !e.label) { state.crit = j; break; }
    }
    save();
    render();
    window.scrollTo(0, 0);
  }
  function nextUnfinished() {
    for (var step = 1; step <= CONVS.length; step++) {
      var i = (state.conv + step) % CONVS.length;
      if (doneIn(CONVS[i]) < CONVS[i].criteria.length) { goConv(i); return; }
    }
  }
  function focusNote() {
    var card = document.getElementById("crit-" + state.crit);
    var note = card && card.querySelector("textarea");
    if (note) note.focus();
  }
  function toggleTools() {
    var all = els.chat.querySelectorAll("details.tool");
    var open = all.length && !all[0].open;
    for (var i = 0; i < all.length; i++) all[i].open = open;
  }
  function toggleHelp(show) { els.help.classList.toggle("hidden", !show); }
  function askName() {
    els.ask.classList.remove("hidden");
    document.getElementById("ask-name").focus();
  }

  // RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. A field a spreadsheet would run
  // as a formula (= + - @, a tab or a carriage return first, after any quotes) gets a leading ' (OWASP, CSV
  // injection; the same rule as convoeval.frames.spreadsheet): a note may quote the agent, whoever wrote its words.
  function csvField(value) {
    var s = value === undefined || value === null ? "" : String(value);
    if (/^'*[=+\-@\t\r]/.test(s)) s = "'" + s;
    return /[",\r\n]/.test(s) ? "\"" + s.replace(/"/g, "\"\"") + "\"" : s;
  }
  // Criteria with a note and no verdict: a label needs pass, fail or unsure, so these would not be exported.
  function notesWithoutVerdict() {
    var found = [];
    CONVS.forEach(function (c, ci) {
      c.criteria.forEach(function (k, ki) {
        var e = entry(c, k.index, false);
        if (e && e.note && !e.label) found.push({ conv: ci, crit: ki, note: e.note });
      });
    });
    return found;
  }
  function csvText() {
    var lines = ["conversation,criterion,label,rater,note"];
    CONVS.forEach(function (c) {
      c.criteria.forEach(function (k) {
        var e = entry(c, k.index, false);
        if (!e || !e.label) return;
        lines.push([c.id, k.csv, e.label, state.rater, e.note || ""].map(csvField).join(","));
      });
    });
    return lines.join("\r\n") + "\r\n";
  }
  function exportCsv(withoutPending) {
    if (!state.rater) { askName(); return; }
    var pending = notesWithoutVerdict();
    if (pending.length && withoutPending !== true) { askPending(pending); return; }
    var t = totals();
    var blob = new Blob([csvText()], { type: "text/csv;charset=utf-8" });
    var a = document.createElement("a");
    var safe = function (s) { return String(s).replace(/[^A-Za-z0-9_.-]+/g, "-").replace(/^-+|-+$/g, ""); };
    a.href = URL.createObjectURL(blob);
    a.download = "labels-" + (safe(DATA.source) || "run") + "-" + (safe(state.rater) || "rater") + ".csv";
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
    els.status.textContent = "exported " + t.done + " of " + t.all + " labels" +
      (pending.length ? " (" + pending.length + " note(s) without a verdict left out)" : "");
  }
  function askPending(pending) {
    var box = els.pending.querySelector(".plist");
    box.textContent = "";
    pending.forEach(function (p) {
      box.appendChild(el("li", null, "conversation " + (p.conv + 1) + ", criterion " + (p.crit + 1) + ": " + p.note));
    });
    els.pending.querySelector("h2").textContent = pending.length + " note(s) without a verdict";
    els.pending.classList.remove("hidden");
    els.pending.querySelector("button.primary").focus();
  }
  function closePending(goFirst) {
    els.pending.classList.add("hidden");
    if (goFirst) {
      var first = notesWithoutVerdict()[0];
      if (first) {
        if (first.conv !== state.conv) { state.conv = first.conv; render(); }
        state.crit = first.crit; save(); renderPanel(); markCurrent();
      }
    }
  }

  // ---------- keyboard ----------
  document.addEventListener("keydown", function (ev) {
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;  // leave the browser's own shortcuts alone
    var target = ev.target;
    var typing = target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA");
    if (typing) {
      if (ev.key === "Escape" || (ev.key === "Enter" && target.id === "rater")) { target.blur(); ev.preventDefault(); }
      return;
    }
    if (!els.ask.classList.contains("hidden")) return;
    if (!els.pending.classList.contains("hidden")) {
      if (ev.key === "Escape") { closePending(false); ev.preventDefault(); }
      return;
    }
    if (!els.help.classList.contains("hidden")) {
      if (ev.key === "Escape" || ev.key === "?") { toggleHelp(false); ev.preventDefault(); }
      return;
    }
    var key = ev.key;
    var handled = true;
    if (key === "p" || key === "f" || key === "u") setLabel(LABELS[key], true);
    else if (key === "j" || key === "ArrowDown") moveCrit(1);
    else if (key === "k" || key === "ArrowUp") moveCrit(-1);
    else if (key === "]" || key === "ArrowRight") goConv(state.conv + 1);
    else if (key === "[" || key === "ArrowLeft") goConv(state.conv - 1);
    else if (key === "n" || key === "Enter") focusNote();
    else if (key === "Backspace" || key === "Delete") clearLabel();
    else if (key === "g") nextUnfinished();
    else if (key === "t") toggleTools();
    else if (key === "e") exportCsv(false);
    else if (key === "?") toggleHelp(true);
    else handled = false;
    if (handled) ev.preventDefault();
  });

  build();
  state.conv = Math.min(Math.max(0, state.conv | 0), CONVS.length - 1);
  state.crit = Math.min(Math.max(0, state.crit | 0), Math.max(0, conv().criteria.length - 1));
  render();
  if (!state.rater) askName();
  window.convoevalLabels = { csv: csvText, state: function () { return state; } };  // for tests and the console
})();
