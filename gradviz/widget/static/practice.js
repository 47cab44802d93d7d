// gradviz practice mode: before a chosen step is revealed, ask the student for it (predict, then see).
//
// Concatenated after widget.js into one ES module (gradviz/widget/standalone.py: widget_module), so
// a saved page asks and checks with no kernel.  The parser and the checker are those of
// gradviz/quiz (answers.py, checking.py), line for line: tests/widget/test_practice_js.py runs both on
// the same answers.  Every word is a key of gradviz/widget/i18n.py; what a student types is only
// ever put in the page as text (textContent), never as markup.

/**
 * The practice traits (gradviz/widget/model.py):
 * @typedef {Object} Practice
 * @property {Question[]} questions   @property {number} tries   @property {boolean} lecture
 * @property {boolean} hide_derivation
 * @typedef {Object} Question
 * @property {string} id  @property {string} kind  @property {string} name  @property {string} node
 * @property {number} at        asked while frame at - 1 is shown; frame at reveals the answer
 * @property {[string, Object]} text   @property {*} expected   @property {number[]} shape
 * @property {string} dtype     @property {string} answer   @property {[string, Object][]} hints
 * @property {[string, *][]} mistakes   @property {string[]} [choices]
 */

// --- reading an answer (gradviz/quiz/answers.py) ------------------------------------------------

const PQ_LIMITS = { chars: 2000, depth: 32, numbers: 10000 };
const PQ_NAMES = { inf: Infinity, nan: NaN };
const PQ_SIGNS = { "\u2212": "-", "\u00d7": "*", "\u00b7": "*", "\u22c5": "*", "\u00f7": "/" };

class PqError extends Error {
  constructor(key, args = {}) { super(key); this.key = key; this.args = args; }
}

function pqTokens(text) {
  const re = /\s*(?:((?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|(\*\*|[-+*/(),.[\]]))/y;
  const out = [];
  let pos = 0, depth = 0, newline = false;
  text = text.replace(/\s+$/, "");
  while (pos < text.length) {
    re.lastIndex = pos;
    const m = re.exec(text);
    if (!m || re.lastIndex === pos) throw new PqError("p_syntax");
    const space = m[0].slice(0, m[0].length - (m[1] || m[2] || m[3]).length);
    if (depth <= 0 && /[\n\r]/.test(space)) newline = true;   // (Python: a new line ends it; said after the names)
    if (m[1] !== undefined) {
      if (/^0\d+$/.test(m[1])) throw new PqError("p_syntax");
      out.push({ k: "num", t: m[1] });
    } else if (m[2] !== undefined) {
      if (!(m[2] in PQ_NAMES) && m[2] !== "tensor" && m[2] !== "torch") throw new PqError("p_name", { name: m[2].slice(0, 20) });
      out.push({ k: "name", t: m[2] });
    } else {
      const t = m[3];
      if (t === "(" || t === "[") { depth += 1; if (depth > PQ_LIMITS.depth) throw new PqError("p_too_big"); }
      else if (t === ")" || t === "]") depth -= 1;
      out.push({ k: "op", t });
    }
    pos = re.lastIndex;
  }
  if (newline) throw new PqError("p_syntax");
  return out;
}

/** The tokens as a tree: Python's expression grammar, for the nodes answers.py evaluates. */
function pqTree(tokens) {
  let i = 0;
  const peek = () => tokens[i];
  const isOp = (t) => tokens[i] && tokens[i].k === "op" && tokens[i].t === t;
  const eat = (t) => { if (!isOp(t)) throw new PqError("p_syntax"); i += 1; };
  const startsExpr = () => {
    const tk = tokens[i];
    return !!tk && (tk.k !== "op" || ["(", "[", "-", "+"].includes(tk.t));
  };
  function items(close) {          // expr (, expr)* [,] up to close; "comma" when one was seen
    const list = [];
    let comma = false;
    while (!isOp(close)) {
      list.push(expr());
      if (isOp(",")) { eat(","); comma = true; } else break;
    }
    eat(close);
    return { list, comma };
  }
  function primary() {
    const tk = peek();
    if (!tk) throw new PqError("p_syntax");
    if (tk.k === "num") { i += 1; return { t: "num", v: Number(tk.t) }; }
    if (tk.k === "name") {
      i += 1;
      if (tk.t === "tensor" || tk.t === "torch") {
        if (tk.t === "torch") { eat("."); const n = peek(); if (!n || n.k !== "name" || n.t !== "tensor") throw new PqError("p_syntax"); i += 1; }
        eat("(");
        const { list } = items(")");
        if (list.length !== 1) throw new PqError("p_syntax");
        return list[0];
      }
      return { t: "name", v: PQ_NAMES[tk.t] };
    }
    if (tk.t === "(") {
      eat("(");
      if (isOp(")")) { eat(")"); return { t: "list", items: [] }; }
      const first = expr();
      if (isOp(")")) { eat(")"); return first; }
      eat(",");
      const { list } = items(")");
      return { t: "list", items: [first, ...list] };
    }
    if (tk.t === "[") { eat("["); return { t: "list", items: items("]").list }; }
    throw new PqError("p_syntax");
  }
  function power() {
    const base = primary();
    if (tokens[i] && tokens[i].k === "op" && ["(", "[", "."].includes(tokens[i].t)) throw new PqError("p_syntax");
    if (isOp("**")) { eat("**"); return { t: "bin", op: "**", a: base, b: factor() }; }
    return base;
  }
  function factor() {
    if (isOp("-") || isOp("+")) { const op = peek().t; i += 1; return { t: "un", op, a: factor() }; }
    return power();
  }
  function term() {
    let a = factor();
    while (isOp("*") || isOp("/")) { const op = peek().t; i += 1; a = { t: "bin", op, a, b: factor() }; }
    return a;
  }
  function expr() {
    if (!startsExpr()) throw new PqError("p_syntax");
    let a = term();
    while (isOp("+") || isOp("-")) { const op = peek().t; i += 1; a = { t: "bin", op, a, b: term() }; }
    return a;
  }
  const first = expr();
  let top = first;
  if (isOp(",")) {
    const list = [first];
    while (isOp(",")) { eat(","); if (i >= tokens.length) break; list.push(expr()); }
    top = { t: "list", items: list };
  }
  if (i !== tokens.length) throw new PqError("p_syntax");
  return top;
}

function pqPow(a, b) {             // C's pow, as numpy's: 1 ** nan is 1, (-1) ** inf is 1
  if (a === 1 || b === 0) return 1;
  if (a === -1 && (b === Infinity || b === -Infinity)) return 1;
  return a ** b;
}

function pqEval(node, count) {
  if (node.t === "num" || node.t === "name") {
    count.n += 1;
    if (count.n > PQ_LIMITS.numbers) throw new PqError("p_too_big");
    return node.v;
  }
  if (node.t === "list") return node.items.map((x) => pqEval(x, count));
  if (node.t === "un") {
    const v = pqEval(node.a, count);
    if (Array.isArray(v)) throw new PqError("p_list_arith");
    return node.op === "-" ? -v : v;
  }
  const a = pqEval(node.a, count), b = pqEval(node.b, count);
  if (Array.isArray(a) || Array.isArray(b)) throw new PqError("p_list_arith");
  return node.op === "+" ? a + b : node.op === "-" ? a - b : node.op === "*" ? a * b : node.op === "/" ? a / b : pqPow(a, b);
}

function pqShape(v) {
  if (!Array.isArray(v)) return [];
  if (!v.length) return [0];
  const inner = v.map(pqShape);
  for (const s of inner) if (s.join(",") !== inner[0].join(",")) throw new PqError("p_ragged");
  return [v.length, ...inner[0]];
}

const pqFlat = (v) => (Array.isArray(v) ? v.flatMap(pqFlat) : [v]);

/** An answer's numbers: {shape, flat, value}, or a PqError whose key says why not. */
export function parseAnswer(text) {
  if (typeof text !== "string") throw new TypeError("parseAnswer takes a string");
  if (text.length > PQ_LIMITS.chars) throw new PqError("p_too_long", { limit: PQ_LIMITS.chars });
  text = text.replace(/[\u2212\u00d7\u00b7\u22c5\u00f7]/g, (c) => PQ_SIGNS[c]).trim();
  if (!text) throw new PqError("p_empty");
  const tree = pqTree(pqTokens(text));
  const value = pqEval(tree, { n: 0 });
  const shape = pqShape(value);
  return { shape, flat: pqFlat(value), value };
}

// --- checking it (gradviz/quiz/checking.py) -----------------------------------------------------

const PQ_EPS = { float16: 2 ** -10, bfloat16: 2 ** -7, float32: 2 ** -23, float64: 2 ** -52 };

export function tolerance(dtype) {
  const name = String(dtype).replace("torch.", "");
  if (name === "bool" || name.startsWith("int") || name.startsWith("uint")) return [0, 0];
  const eps = PQ_EPS[name] ?? PQ_EPS.float32;
  return [Math.max(5e-4, 4 * eps), Math.max(1e-6, eps)];
}

function pqClose(a, b, tol) {
  return a === b || (Number.isNaN(a) && Number.isNaN(b))
    || (Number.isFinite(a) && Number.isFinite(b) && Math.abs(a - b) <= tol[1] + tol[0] * Math.abs(b));
}

/** A saved value back as numbers ("nan", "inf" and "-inf" are JSON's strings for them). */
function pqNumbers(v) {
  if (Array.isArray(v)) return v.map(pqNumbers);
  if (typeof v === "string") return v === "nan" ? NaN : v === "inf" ? Infinity : v === "-inf" ? -Infinity : Number(v);
  return v;
}

const shapeText = (s) => `(${s.join(", ")}${s.length === 1 ? "," : ""})`;
const sameShape = (a, b) => a.length === b.length && a.every((n, k) => n === b[k]);
const allClose = (a, b, tol) => a.length === b.length && a.every((x, k) => pqClose(x, b[k], tol));

function pqArray(v) {
  const value = pqNumbers(v);
  return { shape: pqShape(value), flat: pqFlat(value) };
}

function shapeSlip(got, want, tol) {
  if (!got.shape.length && want.flat.length && want.flat.every((w) => pqClose(got.flat[0], w, tol))) return "v_shape_broadcast";
  if (got.flat.length === want.flat.length && allClose(got.flat, want.flat, tol)) return "v_shape_squeeze";
  const extra = got.shape.length - want.shape.length;
  if (extra > 0 && sameShape(got.shape.slice(extra), want.shape)) {
    const inner = want.flat.length, rows = got.flat.length / Math.max(inner, 1);
    const sum = new Array(inner).fill(0);
    for (let r = 0; r < rows; r++) for (let k = 0; k < inner; k++) sum[k] += got.flat[r * inner + k];
    if (inner && allClose(sum, want.flat, tol)) return "v_shape_batch";
  }
  if (got.shape.length === 2 && want.shape.length === 2 && got.shape[0] === want.shape[1] && got.shape[1] === want.shape[0]) {
    const [r, c] = got.shape, t = [];
    for (let j = 0; j < c; j++) for (let i = 0; i < r; i++) t.push(got.flat[i * c + j]);
    if (allClose(t, want.flat, tol)) return "v_shape_transpose";
  }
  return "v_shape";
}

/** The verdict on a typed answer, exactly as gradviz.quiz.check_answer gives it. */
export function checkAnswer(text, expected, dtype = "float32", mistakes = []) {
  let got;
  try {
    got = parseAnswer(text);
  } catch (e) {
    if (!(e instanceof PqError)) throw e;
    return { ok: null, key: e.key, args: { ...e.args }, mistake: null, value: null };
  }
  const want = pqArray(expected), tol = tolerance(dtype);
  const verdict = { ok: false, key: "v_wrong", args: { got: shapeText(got.shape), want: shapeText(want.shape) }, mistake: null, value: got.value };
  const same = sameShape(got.shape, want.shape);
  if (same && allClose(got.flat, want.flat, tol)) return { ...verdict, ok: true, key: "v_ok" };
  for (const [kind, v] of mistakes) {
    if (v === null || v === undefined) continue;
    const m = pqArray(v);
    if (sameShape(got.shape, m.shape) && allClose(got.flat, m.flat, tol)) return { ...verdict, key: "v_mistake", mistake: kind };
  }
  if (same) {
    const right = got.flat.filter((x, k) => pqClose(x, want.flat[k], tol)).length;
    if (right) return { ...verdict, key: "v_partly", args: { ...verdict.args, right: String(right), n: String(want.flat.length) } };
    return verdict;
  }
  return { ...verdict, key: shapeSlip(got, want, tol) };
}

// --- the questions in the widget ----------------------------------------------------------------

function pqSettled(rec, tries) {
  return !!rec && (rec.correct === true || !!rec.revealed || (rec.tries || 0) >= tries);
}

/** The scores of the answers so far (gradviz.widget.practice.score). */
function pqScore(practice, answers) {
  const qs = (practice && practice.questions) || [], tries = (practice && practice.tries) || 2;
  const byId = new Map((answers || []).map((a) => [a.id, a]));
  const done = qs.map((q) => byId.get(q.id)).filter((a) => pqSettled(a, tries));
  return {
    asked: qs.length, answered: done.length,
    correct: done.filter((a) => a.correct === true).length,
    first_try: done.filter((a) => a.correct === true && a.tries === 1).length,
    tries: (answers || []).reduce((s, a) => s + (a.tries || 0), 0),
    revealed: done.filter((a) => a.revealed).length,
  };
}

/** A short fingerprint of a text (FNV-1a, 32 bits, hex): which questions a page asks. */
export function pqHash(text) {
  let h = 0x811c9dc5;
  for (let k = 0; k < text.length; k++) { h ^= text.charCodeAt(k); h = Math.imul(h, 0x01000193) >>> 0; }
  return h.toString(16).padStart(8, "0");
}

/** The widget's saved-page element (its id is unique on the page), or null in a live notebook. */
function pqHost(root) {
  const host = root.closest && root.closest("[data-gv-standalone]");
  return host && host.id ? host : null;
}

/** Where answers of a saved page are kept between visits (no kernel: the page's own storage).
 *  One key per page, widget and set of questions: two pages, two widgets of a page, or a page saved
 *  again over another at the same path never read each other's answers. */
function pqStore(root, questions) {
  const host = pqHost(root);
  if (!host) return null;
  const asked = pqHash(JSON.stringify((questions || []).map((q) => [q.id, q.kind, q.name, q.at, q.expected])));
  const key = `gradviz-practice:${location.pathname}#${host.id}:${asked}`;
  try {
    const ls = window.localStorage;
    return { key, load: () => JSON.parse(ls.getItem(key) || "null"), save: (v) => ls.setItem(key, JSON.stringify(v)) };
  } catch (e) {
    return null;
  }
}

/** A file name made of safe characters only (letters, digits, - and _). */
export const pqSafe = (text, fallback) => (String(text || "").replace(/[^A-Za-z0-9_-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 40) || fallback);

/** The practice part: the question, its input or options, the verdict, hints and the score.
 *  The player asks gate(from, k) before it shows step k, and tells shown(k) after. */
function createPractice(ctx) {
  const { model, root, uid } = ctx;
  const S = () => ctx.S();
  // the focused element where the widget lives (a deck puts it in a shadow root)
  const active = () => (root.getRootNode && root.getRootNode().activeElement) || document.activeElement;
  const inDeck = () => !!(root.getRootNode && root.getRootNode().host);   // deck.js: a shadow root per widget
  const words = (msg) => renderMsg(S(), msg);
  const P = () => model.get("practice") || {};
  const qs = () => P().questions || [];
  const tries = () => P().tries || 2;
  let pending = null, started = new Map();

  const inputId = `${uid}-answer`;
  const qText = h("label", { class: "gv-q-text", for: inputId, "data-gv": "question" });
  const input = h("input", { type: "text", id: inputId, class: "gv-q-input", "data-gv": "answer", autocomplete: "off",
    spellcheck: "false", autocapitalize: "off", enterkeyhint: "done" });
  const submit = h("button", { type: "submit", class: "gv-btn gv-q-submit", "data-gv": "submit" });
  const reveal = h("button", { type: "button", class: "gv-btn gv-q-reveal", "data-gv": "reveal" });
  const choices = h("div", { class: "gv-q-choices", role: "group", "data-gv": "choices" });
  const help = h("div", { class: "gv-q-help", id: `${uid}-help` });
  const row = h("div", { class: "gv-q-row" }, input, submit, reveal);
  const form = h("form", { class: "gv-q-form", "data-gv": "practice-form", novalidate: true }, qText, row, choices, help);
  const verdict = h("div", { class: "gv-q-verdict", role: "status", "aria-live": "polite", "aria-atomic": "true", "data-gv": "verdict" });
  const hint = h("div", { class: "gv-q-hint", "data-gv": "hint" });
  const scoreEl = h("div", { class: "gv-q-score", "data-gv": "score" });
  const download = h("button", { type: "button", class: "gv-btn gv-q-download", "data-gv": "download", hidden: true });
  const foot = h("div", { class: "gv-q-foot" }, scoreEl, download);
  const el = h("section", { class: "gv-practice", "data-gv": "practice", hidden: true }, form, verdict, hint, foot);
  input.setAttribute("aria-describedby", `${uid}-help`);

  function answers() { return model.get("answers") || []; }
  function recOf(q) { return answers().find((a) => a.id === q.id); }
  function unsettled(q) { return !pqSettled(recOf(q), tries()); }

  function save(list) {
    model.set("answers", list);
    model.set("score", pqScore(P(), list));
    model.save_changes();
    if (store) { try { store.save(list); } catch (e) { /* storage full or refused: the page still works */ } }
  }

  function upsert(q, change) {
    const list = answers().map((a) => ({ ...a }));
    let rec = list.find((a) => a.id === q.id);
    const now = Date.now() / 1000;
    if (!rec) {
      rec = { id: q.id, node: q.node, name: q.name, kind: q.kind, question: words(q.text), typed: "", attempts: [],
        correct: null, tries: 0, time: 0, started: started.get(q.id) ?? now, revealed: false };
      list.push(rec);
    }
    change(rec, now);
    rec.time = Math.round((now - (rec.started ?? now)) * 1000) / 1000;
    save(list);
    return rec;
  }

  function say(msg, tone) {
    verdict.textContent = msg ? words(msg) : "";
    verdict.dataset.tone = tone || "";
  }

  function verdictMsg(q, v) {
    const args = { ...v.args, name: q.name, answer: q.answer };
    if (v.key === "v_mistake") args.mistake = [`mk_${v.mistake}`, {}];
    return [v.key, args];
  }

  function showScore() {
    const s = pqScore(P(), answers());
    scoreEl.textContent = qs().length ? fmt(S(), "pr_score", { correct: s.correct, answered: s.answered, asked: s.asked }) : "";
    download.hidden = !answers().length;
  }

  /** The answers as a file the student keeps or hands in: every try, the score, which page and widget. */
  function answersFile() {
    const host = pqHost(root);
    const page = decodeURIComponent(location.pathname.split("/").pop() || "") || document.title || "";
    return {
      format: "gradviz-answers", version: 1, page, title: document.title || "",
      widget: host ? host.id : uid, root: model.get("root_name") || "", lang: model.get("lang") || "",
      saved: new Date().toISOString(), score: pqScore(P(), answers()), answers: answers(),
    };
  }

  function downloadAnswers() {
    const data = answersFile();
    // (JSON, not markup: what a student typed stays a string in a file no page renders)
    const blob = new Blob([JSON.stringify(data, null, 2) + "\n"], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const a = document.createElement("a");
    a.href = url;
    a.download = `answers-${pqSafe(data.page.replace(/\.html?$/i, ""), "page")}-${pqSafe(data.root, "out")}-${pqSafe(data.widget, "widget")}.json`;
    a.rel = "noopener";
    a.hidden = true;
    el.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  }

  function hideDerivation() {
    const hide = !!P().hide_derivation && qs().some(unsettled);
    root.classList.toggle("gv-practice-hide", hide);
    const panel = root.querySelector(".gv-deriv");
    if (panel) panel.setAttribute("data-gv-note", hide ? S().pr_deriv_hidden || "" : "");
  }

  function settle(q, rec) {
    const typing = form.contains(active());
    form.hidden = true;
    if (typing) root.focus({ preventScroll: true });   // the keys go on to the player (→ steps on)
    hint.textContent = "";
    pending = null;
    hideDerivation();
    showScore();
    ctx.go(q.at);               // the step that shows the answer (or, past the end, stays)
  }

  function attempt(text) {
    const q = pending;
    if (!q) return;
    const v = checkAnswer(text, q.expected, q.dtype, q.mistakes || []);
    if (v.ok === null) {        // unreadable: no try spent; say what could not be read
      say([v.key, { ...v.args }], "unread");
      return;
    }
    const rec = upsert(q, (r, now) => {
      r.attempts = [...(r.attempts || []), { typed: text, ok: v.ok, key: v.key, mistake: v.mistake, at: now }];
      r.typed = text; r.correct = v.ok; r.tries = (r.tries || 0) + 1;
    });
    if (v.ok) {
      say(verdictMsg(q, v), "ok");
      settle(q, rec);
      return;
    }
    const left = tries() - rec.tries;
    if (left <= 0) {
      say(["pr_wrong_answer", { verdict: verdictMsg(q, v), answer: q.answer, name: q.name }], "bad");
      settle(q, rec);
      return;
    }
    say(["pr_try_again", { verdict: verdictMsg(q, v), n: String(left) }], "bad");
    const hints = q.hints || [];
    const k = Math.min(rec.tries, hints.length) - 1;
    hint.textContent = k >= 0 ? fmt(S(), "pr_hint", { hint: words(hints[k]) }) : "";
    input.select();
  }

  /** Reveal the open question (a slide deck's clicker: the room predicted); false if none is open. */
  function revealPending() {
    if (!pending || !unsettled(pending)) return false;
    giveUp();
    return true;
  }

  function giveUp() {
    const q = pending;
    if (!q) return;
    const rec = upsert(q, (r) => { r.revealed = true; });
    say(["pr_revealed", { name: q.name, answer: q.answer }], "shown");
    settle(q, rec);
  }

  form.addEventListener("submit", (ev) => { ev.preventDefault(); attempt(input.value); });
  download.addEventListener("click", downloadAnswers);
  reveal.addEventListener("click", giveUp);
  // keys typed in the answer never reach the player (Space, arrows and Home/End edit the text)
  form.addEventListener("keydown", (ev) => ev.stopPropagation());

  function labels() {
    const s = S();
    submit.textContent = s.pr_check || "Check";
    reveal.textContent = P().lecture ? s.pr_reveal_lecture || "Reveal" : s.pr_reveal || "Show the answer";
    help.textContent = P().lecture ? s.pr_lecture_help || "" : s.pr_help || "";
    choices.setAttribute("aria-label", s.pr_choices || "");
    download.textContent = s.pr_download || "Download answers";
    download.title = s.pr_download_title || "";
    if (pending) ask(pending, false);
    showScore();
  }

  function ask(q, fresh = true) {
    pending = q;
    if (!started.has(q.id)) started.set(q.id, Date.now() / 1000);
    el.hidden = false;
    form.hidden = false;
    const lecture = !!P().lecture;
    qText.textContent = words(q.text);
    const rec = recOf(q);
    input.hidden = submit.hidden = lecture || !!(q.choices && q.choices.length);
    choices.textContent = "";
    choices.hidden = lecture || !(q.choices && q.choices.length);
    help.hidden = !lecture && !choices.hidden;          // (how to type an answer: not for a pick)
    if (!choices.hidden) {
      for (const c of q.choices) {
        const b = h("button", { type: "button", class: "gv-btn gv-q-choice", "data-gv": "choice", text: c });
        b.addEventListener("click", () => attempt(c));
        choices.append(b);
      }
    }
    if (fresh) {                  // (the last verdict stays: "Right: ..." of the question before)
      input.value = "";
      if (!rec) hint.textContent = "";
    }
    root.dataset.practice = lecture ? "lecture" : "ask";
  }

  /** Where the player may go from step `from` towards step k: not past an open question.  In
   *  lecture mode a key pressed on the step that asks reveals it (and goes on); the tick of play
   *  (`auto`) does not: play stops on the step that asks, while the room predicts. */
  function gate(from, k, auto) {
    if (k <= from) return k;
    let stop = k;
    for (const q of qs()) {
      if (q.at > from && q.at <= stop && unsettled(q)) {
        if (P().lecture && !auto && pending === q && from === q.at - 1) {   // the room predicted: this key reveals
          upsert(q, (r) => { r.revealed = true; });
          say(["pr_revealed", { name: q.name, answer: q.answer }], "shown");
          pending = null;
          form.hidden = true;
          hideDerivation();
          showScore();
          continue;
        }
        stop = q.at - 1;
      }
    }
    if (stop < k && stop === from && pending && !P().lecture) focusAnswer();
    return stop;
  }

  function focusAnswer() {
    if (inDeck()) return;          // a clicker's → and PageDown must keep reaching the deck
    if (input.hidden) { const c = choices.querySelector("button"); if (c) c.focus({ preventScroll: true }); }
    else input.focus({ preventScroll: true });
  }

  /** Step k is shown: ask the question it comes before, if one is open. */
  function shown(k, last) {
    if (!qs().length) return;
    const q = qs().find((x) => unsettled(x) && (x.at - 1 === k || (x.at > last && k === last)));
    if (q) {
      if (pending !== q) {
        ask(q);
        // a keyboard user stepping here types next (focus stays put for a mouse on the buttons)
        if (!P().lecture && active() === root) focusAnswer();
      }
    }
    else if (pending) { pending = null; form.hidden = true; }
    hideDerivation();
  }

  const store = pqStore(root, qs());
  function restore() {
    if (!store || !qs().length || model.get("live")) return;
    try {
      const saved = store.load();
      if (Array.isArray(saved) && saved.length) { model.set("answers", saved); model.set("score", pqScore(P(), saved)); }
    } catch (e) { /* nothing kept */ }
  }

  function load() {
    el.hidden = !qs().length;
    if (inDeck()) root.getRootNode().host.toggleAttribute("data-gv-practice", !!qs().length);
    root.classList.toggle("gv-practicing", !!qs().length);
    pending = null;
    form.hidden = true;
    labels();
    hideDerivation();
    showScore();
  }

  const onAnswers = () => { showScore(); hideDerivation(); if (pending && !unsettled(pending)) { form.hidden = true; pending = null; } };
  model.on("change:answers", onAnswers);
  model.on("change:practice", load);
  model.on("change:strings", labels);
  restore();
  load();
  return { el, gate, shown, reveal: revealPending, dispose: () => { model.off("change:answers", onAnswers); model.off("change:practice", load); model.off("change:strings", labels); } };
}
