// gradviz teaching widget: plays an AutogradWidget's frames over its graph (anywidget ES module, no build).
//
// The traits are the whole truth; this file only shows them.  Frames carry "slots" (a node's
// value text, a gradient, an edge label, a node's state) that stay set until a later frame
// changes them, so any step can be drawn directly: for each slot, the last value set at or
// before that step (a binary search), applied only where the picture differs.

/**
 * The model: mirrors the synced traits of gradviz.widget.AutogradWidget, one for one.
 * @typedef {Object} Model
 * @property {string} svg            the graph as SVG, laid out once at its final size
 * @property {Object} graph          the drawn graph (gradviz.graph.Graph.to_dict())
 * @property {Frame[]} frames        the animation, one entry per step
 * @property {number} frame          the step shown now
 * @property {boolean} playing       whether the front end steps by itself
 * @property {number} speed          steps per second
 * @property {Derivation} derivation instructor steps, forward definitions, chain rule per leaf
 * @property {"en"|"ko"} lang        language of every word
 * @property {Object<string,string>} strings  the words in lang (gradviz/widget/i18n.py)
 * @property {boolean} presenter     larger type for slides
 * @property {boolean} retain_graph  what the backward() button passes
 * @property {boolean} live          whether the buttons can reach Python
 * @property {string} error          why the graph could not be drawn ("" when it was)
 * @property {string} root_name      the tensor whose graph is shown
 *
 * @typedef {Object} Frame
 * @property {string} phase   "start" | "forward" | "backward" | "zero" | "error" | "note"
 * @property {string} kind    "start" | "fwd_in" | "fwd_out" | "seed" | "sum" | "node" | "acc" | "done" | ...
 * @property {?number} run    the backward() call, from 0
 * @property {[string, Object]} msg   caption: [template key, args]
 * @property {string[]} focus  @property {string[]} lit  @property {string[]} edges
 * @property {Object<string, *>} set  slots set by this frame
 * @property {?Object} event  the recorded engine event's numbers
 * @property {string} [error] the engine's error message
 *
 * @typedef {Object} Derivation
 * @property {Math[]} custom  @property {Math[]} defs  @property {Object[]} leaves
 * @typedef {{latex: string, mathml: string}} Math
 */

const SPEEDS = [0.5, 1, 2, 4, 8];
let uidCounter = 0;

// --- words ---------------------------------------------------------------------------------------

function fmt(strings, key, args) {
  const template = strings[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (m, k) => (args && k in args ? String(args[k]) : m));
}

function wordValue(strings, v) {
  if (v && typeof v === "object" && !Array.isArray(v) && Array.isArray(v.join)) {
    return v.join.map((m) => wordValue(strings, m)).join(strings.list_sep ?? "; ");
  }
  if (Array.isArray(v) && v.length === 2 && typeof v[0] === "string" && v[1] && typeof v[1] === "object") {
    return renderMsg(strings, v);
  }
  return String(v);
}

/** The words of a frame's message, exactly as gradviz.widget.i18n.render does it. */
export function renderMsg(strings, msg) {
  if (!Array.isArray(msg)) return "";
  const [key, args] = msg;
  const words = {};
  for (const [k, v] of Object.entries(args || {})) words[k] = wordValue(strings, v);
  return fmt(strings, key, words);
}

// --- small DOM helpers -----------------------------------------------------------------------------

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children) if (c) el.append(c);
  return el;
}

const reduceMotion = () =>
  typeof matchMedia === "function" && matchMedia("(prefers-reduced-motion: reduce)").matches;

/** Fade an element in with a CSS animation (no forced style recalculation, unlike el.animate). */
function fadeIn(el) {
  if (!el || reduceMotion()) return;
  if (el.classList.contains("gv-new")) return;     // already fading
  el.classList.add("gv-new");
  el.addEventListener("animationend", () => el.classList.remove("gv-new"), { once: true });
}

// Icons drawn here (fonts differ in which arrow glyphs they have): 16x16 paths, fill currentColor.
const ICONS = {
  start: "M2 2h2v12H2zM14 2v12L5 8z",
  back: "M3 2h2v12H3zM13 2v12L6 8z",
  play: "M4 2l10 6-10 6z",
  pause: "M3 2h4v12H3zM9 2h4v12H9z",
  step: "M11 2h2v12h-2zM3 2v12l7-6z",
  backward: "M12 2h2v12h-2zM1 2v12l5-6zM6 2v12l5-6z",
};

function setIcon(button, name) {
  button.innerHTML = `<svg viewBox="0 0 16 16" aria-hidden="true" focusable="false"><path d="${ICONS[name]}"/></svg>`;
}

// --- the frames, indexed ---------------------------------------------------------------------------

/** slot -> {at: frame indices, val: values}, for "the last value set at or before step k". */
function indexSlots(frames) {
  const slots = new Map();
  frames.forEach((f, k) => {
    for (const [slot, v] of Object.entries(f.set || {})) {
      let e = slots.get(slot);
      if (!e) slots.set(slot, (e = { at: [], val: [] }));
      e.at.push(k);
      e.val.push(v);
    }
  });
  return slots;
}

function valueAt(e, k) {
  let lo = 0, hi = e.at.length - 1, found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (e.at[mid] <= k) { found = mid; lo = mid + 1; } else hi = mid - 1;
  }
  return found < 0 ? undefined : e.val[found];
}

// --- the SVG -------------------------------------------------------------------------------------

/** Parse the drawing into the graph box; index nodes, edges and text slots; make ids unique. */
function mountSvg(box, svgText, uid) {
  box.textContent = "";
  const index = { nodes: new Map(), edges: new Map(), slots: new Map(), svg: null, natural: null };
  if (!svgText) return index;
  const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.nodeName !== "svg" || doc.querySelector("parsererror")) return index;
  for (const bad of svg.querySelectorAll("script, foreignObject")) bad.remove();
  for (const el of svg.querySelectorAll("*")) {
    for (const a of [...el.attributes]) if (/^on/i.test(a.name)) el.removeAttribute(a.name);
  }
  const node = document.importNode(svg, true);
  const px = (v) => { const m = /^([\d.]+)(pt|px)?$/.exec(v || ""); return m ? +m[1] * (m[2] === "pt" ? 4 / 3 : 1) : 0; };
  index.natural = { w: px(node.getAttribute("width")), h: px(node.getAttribute("height")) };
  node.removeAttribute("width");
  node.removeAttribute("height");
  if (index.natural.w && index.natural.h) node.style.aspectRatio = `${index.natural.w} / ${index.natural.h}`;
  node.setAttribute("class", ((node.getAttribute("class") || "") + " gv-svg").trim());
  node.setAttribute("role", "img");
  box.append(node);
  index.svg = node;
  for (const el of node.querySelectorAll("[id]")) {
    const id = el.getAttribute("id");
    const m = /^gv-([ne]\d+)(?:-(\w+))?$/.exec(id);
    if (m) {
      if (!m[2]) (m[1][0] === "n" ? index.nodes : index.edges).set(m[1], el);
      else index.slots.set(`${m[1]}-${m[2]}`, el);
    }
    el.setAttribute("id", `${uid}-${id}`);   // two widgets on one page never share an id
  }
  for (const el of node.querySelectorAll("[href], [*|href]")) {
    const ref = el.getAttribute("href") || el.getAttribute("xlink:href") || "";
    if (!ref.startsWith("#")) { el.removeAttribute("href"); el.removeAttribute("xlink:href"); }
  }
  return index;
}

/** The <text> elements of a slot (a table cell drawn by Graphviz may hold several lines). */
function slotTexts(index, key) {
  const el = index.slots.get(key);
  if (!el) return [];
  if (el.tagName.toLowerCase() === "text") return [el];
  return [...el.querySelectorAll("text")];
}

function setSlotText(index, key, text) {
  const holder = index.slots.get(key);
  if (!holder) return null;
  if (!text) {                       // hide, keeping the laid-out text: nothing moves
    holder.classList.add("gv-hidden");
    return holder;
  }
  const texts = slotTexts(index, key);
  const lines = String(text).split("\n");
  texts.forEach((t, i) => {
    if (i === texts.length - 1 && lines.length > texts.length) t.textContent = lines.slice(i).join(" ");
    else t.textContent = i < lines.length ? lines[i] : "";
  });
  holder.classList.remove("gv-hidden");
  return holder;
}

/** Dark fallback colours for a page outside JupyterLab whose reader prefers a dark scheme. */
function followScheme(root, svg) {
  const inLab = document.body && document.body.hasAttribute("data-jp-theme-light");
  const dark = !inLab && typeof matchMedia === "function" && matchMedia("(prefers-color-scheme: dark)").matches;
  root.classList.toggle("gv-dark-fallback", dark);
  if (svg) svg.classList.toggle("gv-dark", dark);
}

// --- the widget ------------------------------------------------------------------------------------

function render({ model, el }) {
  const uid = `gvw${++uidCounter}${Math.random().toString(36).slice(2, 7)}`;
  const S = () => model.get("strings") || {};
  const root = h("div", { class: "gv-widget", tabindex: "0", role: "group" });
  el.append(root);

  // controls, found by name (data-gv), never by position
  const btn = (name, icon) => {
    const el = h("button", { type: "button", class: "gv-btn", "data-gv": name });
    setIcon(el, icon);
    return el;
  };
  const b = {
    toForward: btn("to-forward", "start"),
    back: btn("back", "back"),
    play: btn("play", "play"),
    step: btn("step", "step"),
    toBackward: btn("to-backward", "backward"),
  };
  const scrub = h("input", { type: "range", class: "gv-scrub", "data-gv": "scrub", min: "0", max: "0", step: "1", value: "0" });
  const count = h("span", { class: "gv-count", "data-gv": "count", "aria-hidden": "true" });
  const phaseLabel = h("span", { class: "gv-phase", "data-gv": "phase" });
  const speed = h("select", { class: "gv-speed", "data-gv": "speed" });
  for (const s of SPEEDS) speed.append(h("option", { value: String(s), text: `${s}×` }));
  const track = h("div", { class: "gv-track", "data-gv": "track", "aria-hidden": "true" });
  const bar = h("div", { class: "gv-bar" },
    h("div", { class: "gv-transport" }, b.toForward, b.back, b.play, b.step, b.toBackward),
    h("div", { class: "gv-scrubwrap" }, scrub, track),
    h("div", { class: "gv-meta" }, phaseLabel, count, speed));

  const graphBox = h("div", { class: "gv-graph", "data-gv": "graph" });
  const fatal = h("div", { class: "gv-fatal", role: "alert", "data-gv": "fatal", hidden: true });
  const deriv = h("aside", { class: "gv-deriv", "data-gv": "derivation" });
  const main = h("div", { class: "gv-main" }, h("div", { class: "gv-graphcol" }, fatal, graphBox), deriv);

  const caption = h("div", { class: "gv-caption", role: "status", "aria-live": "polite", "aria-atomic": "true", "data-gv": "caption" });
  const capWrap = h("div", { class: "gv-capwrap" }, caption);

  const backwardBtn = h("button", { type: "button", class: "gv-btn gv-live-btn", "data-gv": "backward" });
  const retain = h("input", { type: "checkbox", "data-gv": "retain" });
  const retainLabel = h("label", { class: "gv-retain" }, retain, h("code", {}, ""));
  const zeroBtn = h("button", { type: "button", class: "gv-btn gv-live-btn", "data-gv": "zero" });
  const keys = h("span", { class: "gv-keys" });
  const live = h("div", { class: "gv-live", "data-gv": "live" }, backwardBtn, retainLabel, zeroBtn);
  const foot = h("div", { class: "gv-foot" }, live, keys);

  root.append(bar, capWrap, main, foot);

  // --- state ---
  let frames = [];
  let slots = new Map();
  let index = mountSvg(graphBox, "", uid);
  let shown = new Map();           // slot -> value currently in the picture
  let lit = [];                    // elements highlighted by the current frame
  let current = -1;
  let timer = null;
  let checkEls = new Map();        // leaf name -> check element in the derivation
  let leafEls = new Map();
  let seeds = [];                  // indices of backward() seed frames
  let forwardStart = 0;
  let busy = false;

  const n = () => frames.length;

  function labels() {
    const s = S();
    root.setAttribute("aria-label", fmt(s, "widget_label", { root: model.get("root_name") }));
    root.lang = model.get("lang") || "en";
    const set = (el, key) => { el.setAttribute("aria-label", s[key] || key); el.title = s[key] || key; };
    set(b.toForward, "to_forward"); set(b.back, "step_back"); set(b.step, "step_forward");
    set(b.toBackward, "to_backward"); set(scrub, "scrubber"); set(speed, "speed");
    set(b.play, model.get("playing") ? "pause" : "play");
    graphBox.setAttribute("aria-label", s.graph_label || "");
    caption.setAttribute("aria-label", s.caption_label || "");
    backwardBtn.textContent = s.backward_btn || "backward()";
    backwardBtn.title = fmt(s, "backward_title", { root: model.get("root_name") });
    retainLabel.querySelector("code").textContent = s.retain_graph || "retain_graph=True";
    zeroBtn.textContent = s.zero_btn || "zero_()";
    zeroBtn.title = s.zero_title || "";
    keys.textContent = s.keys_help || "";
  }

  function layoutFlags() {
    root.classList.toggle("gv-presenter", !!model.get("presenter"));
    live.hidden = !model.get("live");
    retain.checked = !!model.get("retain_graph");
    const sp = model.get("speed") || 1;
    speed.value = String(SPEEDS.reduce((a, c) => (Math.abs(c - sp) < Math.abs(a - sp) ? c : a), SPEEDS[0]));
  }

  function showFatal() {
    const err = model.get("error");
    const s = S();
    fatal.hidden = !err;
    fatal.textContent = err ? fmt(s, "cannot_render", { reason: err }) : "";
  }

  /** The picture as large as its natural size allows, no taller than most of the window. */
  function sizeSvg() {
    const nat = index.natural;
    if (!index.svg || !nat || !nat.w || !nat.h) return;
    const maxH = (typeof innerHeight === "number" && innerHeight > 200 ? innerHeight : 900) * (model.get("presenter") ? 0.7 : 0.8);
    const big = nat.w * (model.get("presenter") ? 1.4 : 1);
    // fit the window's height, but never below about half the natural size: a tall graph scrolls
    index.svg.style.width = `${Math.round(Math.min(big, Math.max((maxH * nat.w) / nat.h, nat.w * 0.55)))}px`;
  }

  function loadSvg() {
    index = mountSvg(graphBox, model.get("svg"), uid);
    followScheme(root, index.svg);
    sizeSvg();
    shown = new Map();
    lit = [];
    current = -1;
  }

  function loadFrames() {
    frames = model.get("frames") || [];
    slots = indexSlots(frames);
    seeds = [];
    forwardStart = 0;
    frames.forEach((f, k) => {
      if (f.kind === "seed") seeds.push(k);
    });
    const fw = frames.findIndex((f) => f.phase === "forward");
    forwardStart = fw < 0 ? 0 : fw;
    scrub.max = String(Math.max(0, n() - 1));
    buildTrack();
    busy = false;
    clearTimeout(busyTimer);
    backwardBtn.disabled = zeroBtn.disabled = false;
  }

  function buildTrack() {
    track.textContent = "";
    if (!n()) return;
    let start = 0;
    for (let k = 1; k <= n(); k++) {
      if (k === n() || frames[k].phase !== frames[start].phase) {
        const seg = h("span", { class: `gv-seg gv-seg-${frames[start].phase}` });
        seg.style.flexGrow = String(k - start);
        track.append(seg);
        start = k;
      }
    }
  }

  // --- derivation panel ---
  function mathEl(m, cls = "gv-math") {
    const d = h("div", { class: cls });
    if (m && m.mathml) d.innerHTML = m.mathml;     // MathML cleaned to a whitelist in Python
    else if (m && m.latex) d.textContent = m.latex;
    return d;
  }

  function buildDerivation() {
    const s = S();
    const d = model.get("derivation") || {};
    deriv.textContent = "";
    checkEls = new Map();
    leafEls = new Map();
    deriv.append(h("h3", { class: "gv-dtitle", text: s.derivation_title || "" }));
    if (d.custom && d.custom.length) {
      const sec = h("div", { class: "gv-custom" }, h("h4", { text: s.instructor_title || "" }));
      for (const m of d.custom) sec.append(mathEl(m, "gv-math gv-display"));
      deriv.append(sec);
    }
    if (d.defs && d.defs.length) {
      const sec = h("details", { class: "gv-defs", open: true }, h("summary", { text: s.forward_defs || "" }));
      for (const m of d.defs) sec.append(mathEl(m));
      if (d.defs_more) sec.append(h("div", { class: "gv-more", text: fmt(s, "lines_more", { n: d.defs_more }) }));
      deriv.append(sec);
    }
    for (const leaf of d.leaves || []) {
      const sec = h("div", { class: "gv-dleaf", "data-leaf": leaf.leaf });
      const many = (leaf.paths || []).length > 1;
      (leaf.paths || []).forEach((p, i) => {
        const grid = h("div", { class: "gv-stages" });
        if (many) grid.append(h("div", { class: "gv-pathno", text: fmt(s, "path_n", { k: i + 1 }) }));
        (p.stages || []).forEach((m, j) => {
          grid.append(j === 0 ? mathEl(leaf.lhs, "gv-math gv-lhs") : h("span", {}),
            h("span", { class: "gv-eq", text: "=" }), mathEl(m));
        });
        sec.append(grid);
      });
      if (leaf.count > (leaf.paths || []).length) {
        sec.append(h("div", { class: "gv-more", text: fmt(s, "paths_more", { n: leaf.count - leaf.paths.length }) }));
      }
      if (leaf.sum) sec.append(mathEl(leaf.sum, "gv-math gv-sum"));
      if (leaf.closed_tex) sec.append(mathEl(leaf.closed_tex, "gv-math gv-closed"));
      const result = h("div", { class: "gv-result" });
      result.append(h("span", { class: "gv-chain", text: fmt(s, "chain_result", { value: leaf.chain }) }));
      if (leaf.closed !== undefined) result.append(h("span", { class: "gv-closedval", text: fmt(s, "closed_form", { value: leaf.closed }) }));
      const check = h("div", { class: "gv-check", "data-gv": `check-${leaf.leaf}` });
      sec.append(result, check);
      checkEls.set(leaf.leaf, check);
      leafEls.set(leaf.leaf, sec);
      deriv.append(sec);
    }
    if (d.leaves_more) deriv.append(h("div", { class: "gv-more", text: `… +${d.leaves_more}` }));
    if (d.error) deriv.append(h("div", { class: "gv-more", text: fmt(s, "no_derivation", { reason: d.error }) }));
    // re-apply the check slots
    for (const [slot, v] of shown) if (slot.startsWith("check:")) applyCheck(slot.slice(6), v, false);
  }

  function applyCheck(leaf, v, animate) {
    const el = checkEls.get(leaf);
    if (!el || !v) return;
    const s = S();
    el.textContent = "";
    el.classList.remove("gv-ok", "gv-bad", "gv-acc", "gv-none");
    if (v.grad === "None" || v.grad === undefined) {
      el.classList.add("gv-none");
      el.append(h("span", { text: fmt(s, "grad_none", { leaf }) }));
    } else {
      el.append(h("span", { class: "gv-engine", text: fmt(s, "engine_grad", { leaf, value: v.grad }) }));
      if (v.ok === true) {
        el.classList.add("gv-ok");
        el.append(h("span", { class: "gv-mark", "aria-hidden": "true", text: " ✓ " }), h("span", { text: s.agrees || "" }));
      } else if (v.ok === false && v.times !== undefined) {   // accumulation, not an error
        el.classList.add("gv-acc");
        el.append(h("span", { class: "gv-mark", "aria-hidden": "true", text: " Σ " }),
                  h("span", { text: v.times === 0 ? s.zeroed || "" : fmt(s, "accumulated", { k: v.times }) }));
      } else if (v.ok === false) {
        el.classList.add("gv-bad");
        el.append(h("span", { class: "gv-mark", "aria-hidden": "true", text: " ✗ " }), h("span", { text: fmt(s, "differs", { diff: v.diff }) }));
      }
    }
    if (animate) fadeIn(el);
  }

  // --- drawing one step ---
  function applySlot(slot, v, animate) {
    const colon = slot.indexOf(":");
    const kind = slot.slice(0, colon), id = slot.slice(colon + 1);
    if (kind === "check") return applyCheck(id, v, animate);
    if (kind === "cls") {
      const g = index.nodes.get(id);
      if (!g) return;
      const was = g.getAttribute("data-gv-state");
      if (v) g.setAttribute("data-gv-state", v); else g.removeAttribute("data-gv-state");
      if (animate && was === "pending" && v !== "pending") fadeIn(g);
      return;
    }
    const key = kind === "val" ? `${id}-val` : kind === "grad" ? `${id}-grad` : kind === "edge" ? `${id}-grad`
      : kind === "name" ? `${id}-name` : null;
    if (!key) return;
    const holder = setSlotText(index, key, v);
    if (holder && kind === "name") holder.classList.add("gv-autoname");
    if (holder && animate && v) fadeIn(holder);
  }

  function draw(k, { animate = false } = {}) {
    if (!n()) {
      caption.textContent = "";
      return;
    }
    k = Math.max(0, Math.min(n() - 1, k | 0));
    const stepwise = animate && current >= 0 && k === current + 1;
    for (const [slot, e] of slots) {
      const v = valueAt(e, k);
      const old = shown.get(slot);
      const same = typeof v === "object" && v !== null ? JSON.stringify(v) === JSON.stringify(old) : v === old;
      if (same && shown.has(slot)) continue;
      shown.set(slot, v);
      applySlot(slot, v === undefined ? "" : v, stepwise);
    }
    for (const el of lit) el.classList.remove("gv-focus", "gv-lit", "gv-lit-edge", "gv-lit-fwd");
    lit = [];
    const f = frames[k];
    const mark = (id, cls, map) => {
      const el = map.get(id);
      if (el) { el.classList.add(cls); lit.push(el); }
    };
    for (const id of f.lit || []) mark(id, "gv-lit", index.nodes);
    for (const id of f.focus || []) mark(id, "gv-focus", index.nodes);
    // one class per phase on the edges themselves: nothing above them changes, so no big restyle
    for (const id of f.edges || []) mark(id, f.phase === "forward" ? "gv-lit-fwd" : "gv-lit-edge", index.edges);
    if (root.dataset.phase !== f.phase) root.dataset.phase = f.phase;
    for (const [name, sec] of leafEls) sec.classList.toggle("gv-active", `check:${name}` in (f.set || {}));
    const s = S();
    caption.textContent = renderMsg(s, f.msg);
    if (stepwise) fadeIn(caption);
    // the engine's error is the caption itself, marked as an error (read out at once)
    caption.classList.toggle("gv-caption-error", !!f.error);
    caption.setAttribute("aria-live", f.error ? "assertive" : "polite");
    scrub.value = String(k);
    const i = k + 1;
    count.textContent = fmt(s, "step_of", { i, n: n() });
    scrub.setAttribute("aria-valuetext", `${fmt(s, "step_of", { i, n: n() })}: ${caption.textContent}`);
    const phaseKey = f.phase === "forward" ? "forward_pass" : f.phase === "backward" ? "backward_pass" : f.phase === "start" ? "start" : null;
    phaseLabel.textContent = phaseKey ? s[phaseKey] + (f.phase === "backward" && f.run !== null && f.run !== undefined ? ` #${f.run + 1}` : "") : "";
    phaseLabel.dataset.phase = f.phase;
    caption.dataset.phase = f.phase;
    current = k;
    follow(f, stepwise);
  }

  /** Keep the step in sight: when the picture is taller (or wider) than its box, scroll the box,
   *  never the page, so that the nodes this step is about are in view. */
  function follow(f, smooth) {
    if (graphBox.scrollHeight <= graphBox.clientHeight + 1 && graphBox.scrollWidth <= graphBox.clientWidth + 1) return;
    const els = [...(f.focus || []), ...(f.lit || [])].map((id) => index.nodes.get(id)).filter(Boolean);
    if (!els.length) return;
    const view = graphBox.getBoundingClientRect();
    let top = Infinity, bottom = -Infinity, left = Infinity, right = -Infinity;
    for (const el of els) {
      const r = el.getBoundingClientRect();
      top = Math.min(top, r.top); bottom = Math.max(bottom, r.bottom);
      left = Math.min(left, r.left); right = Math.max(right, r.right);
    }
    if (top >= view.top && bottom <= view.bottom && left >= view.left && right <= view.right) return;
    graphBox.scrollTo({
      top: graphBox.scrollTop + (top + bottom - view.top - view.bottom) / 2,
      left: graphBox.scrollLeft + (left + right - view.left - view.right) / 2,
      behavior: smooth ? "smooth" : "auto",
    });
  }

  // --- moving ---
  function go(k, opts = {}) {
    k = Math.max(0, Math.min(n() - 1, k | 0));
    if (k !== model.get("frame")) {
      model.set("frame", k);
      model.save_changes();
    }
    draw(k, opts);
  }

  function setPlaying(on) {
    if (!!model.get("playing") === on) return schedule();
    model.set("playing", on);
    model.save_changes();
    schedule();
  }

  function schedule() {
    clearTimeout(timer);
    timer = null;
    const on = !!model.get("playing");
    const s = S();
    setIcon(b.play, on ? "pause" : "play");
    b.play.setAttribute("aria-label", on ? s.pause || "Pause" : s.play || "Play");
    b.play.title = b.play.getAttribute("aria-label");
    b.play.setAttribute("aria-pressed", on ? "true" : "false");
    if (!on) return;
    const delay = 1000 / Math.max(0.1, model.get("speed") || 1);
    timer = setTimeout(() => {
      if (current >= n() - 1) return setPlaying(false);
      go(current + 1, { animate: true });
      if (current >= n() - 1) setPlaying(false);
      else schedule();
    }, delay);
  }

  function togglePlay() {
    if (!model.get("playing") && current >= n() - 1) go(0);
    setPlaying(!model.get("playing"));
  }

  function jumpBackward() {
    if (!seeds.length) return;
    const next = seeds.find((s) => s > current);
    go(next === undefined ? seeds[0] : next);
  }

  b.toForward.addEventListener("click", () => { setPlaying(false); go(forwardStart); });
  b.back.addEventListener("click", () => { setPlaying(false); go(current - 1); });
  b.step.addEventListener("click", () => { setPlaying(false); go(current + 1, { animate: true }); });
  b.play.addEventListener("click", togglePlay);
  b.toBackward.addEventListener("click", () => { setPlaying(false); jumpBackward(); });
  scrub.addEventListener("input", () => { setPlaying(false); go(+scrub.value); });
  speed.addEventListener("change", () => { model.set("speed", +speed.value); model.save_changes(); schedule(); });
  retain.addEventListener("change", () => { model.set("retain_graph", retain.checked); model.save_changes(); });
  let busyTimer = null;
  function ask(msg) {             // one command at a time; the answer is new frames
    if (busy) return;
    busy = true;
    backwardBtn.disabled = zeroBtn.disabled = true;
    setPlaying(false);
    model.send(msg);
    clearTimeout(busyTimer);      // no answer (kernel busy or gone): let the student try again
    busyTimer = setTimeout(() => { busy = false; backwardBtn.disabled = zeroBtn.disabled = false; }, 15000);
  }
  backwardBtn.addEventListener("click", () => ask({ type: "backward", retain_graph: retain.checked }));
  zeroBtn.addEventListener("click", () => ask({ type: "zero" }));
  root.addEventListener("keydown", (ev) => {
    const tag = (ev.target && ev.target.tagName || "").toLowerCase();
    if (ev.target !== root && ["input", "select", "button", "textarea", "summary"].includes(tag)) return;
    const act = {
      " ": togglePlay, Spacebar: togglePlay,
      ArrowRight: () => { setPlaying(false); go(current + 1, { animate: true }); },
      ArrowLeft: () => { setPlaying(false); go(current - 1); },
      Home: () => { setPlaying(false); go(0); },
      End: () => { setPlaying(false); go(n() - 1); },
    }[ev.key];
    if (act) { ev.preventDefault(); ev.stopPropagation(); act(); }
  });
  // a click on the picture gives the widget the keyboard
  graphBox.addEventListener("mousedown", () => root.focus({ preventScroll: true }));

  // --- model changes ---
  const handlers = {
    "change:svg": () => { loadSvg(); draw(model.get("frame")); },
    "change:frames": () => { loadFrames(); shown = new Map(); draw(model.get("frame")); },
    "change:frame": () => { const k = model.get("frame"); if (k !== current) draw(k, { animate: k === current + 1 }); },
    "change:playing": () => schedule(),
    "change:speed": () => { layoutFlags(); schedule(); },
    "change:derivation": () => buildDerivation(),
    "change:lang": () => { labels(); buildDerivation(); draw(current < 0 ? model.get("frame") : current); },
    "change:strings": () => { labels(); buildDerivation(); shown.clear(); draw(current < 0 ? model.get("frame") : current); },
    "change:presenter": () => { layoutFlags(); sizeSvg(); },
    "change:retain_graph": () => layoutFlags(),
    "change:live": () => layoutFlags(),
    "change:error": () => showFatal(),
    "change:root_name": () => labels(),
  };
  for (const [ev, fn] of Object.entries(handlers)) model.on(ev, fn);
  const scheme = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
  const onScheme = () => followScheme(root, index.svg);
  const onResize = () => sizeSvg();
  if (typeof addEventListener === "function") addEventListener("resize", onResize);
  if (scheme && scheme.addEventListener) scheme.addEventListener("change", onScheme);

  try {
    labels();
    layoutFlags();
    showFatal();
    loadSvg();
    loadFrames();
    buildDerivation();
    draw(model.get("frame") || 0);
    schedule();
  } catch (err) {
    fatal.hidden = false;
    fatal.textContent = fmt(S(), "cannot_render", { reason: String(err && err.message || err) });
  }
  root.dataset.gvReady = "1";

  return () => {
    clearTimeout(timer);
    clearTimeout(busyTimer);
    for (const [ev, fn] of Object.entries(handlers)) model.off(ev, fn);
    if (scheme && scheme.removeEventListener) scheme.removeEventListener("change", onScheme);
    if (typeof removeEventListener === "function") removeEventListener("resize", onResize);
  };
}

// --- without Jupyter: a saved page ----------------------------------------------------------------

/** A stand-in for the anywidget model, over plain saved state (no kernel: send() does nothing). */
export function createModel(state) {
  const data = { ...state };
  const listeners = new Map();
  return {
    get: (k) => data[k],
    set(k, v) {
      if (data[k] === v) return;
      data[k] = v;
      for (const fn of listeners.get(`change:${k}`) || []) fn();
    },
    save_changes() {},
    send() {},
    on(ev, fn) { if (!listeners.has(ev)) listeners.set(ev, []); listeners.get(ev).push(fn); },
    off(ev, fn) { const l = listeners.get(ev); if (l) listeners.set(ev, l.filter((x) => x !== fn)); },
  };
}

/** Boot every saved widget under doc that has not been booted yet (each from its own state). */
export function bootStandalone(doc = document) {
  for (const host of doc.querySelectorAll("[data-gv-standalone]:not([data-gv-booted])")) {
    host.setAttribute("data-gv-booted", "1");
    const stateEl = host.querySelector(":scope > script.gv-state");
    let state = {};
    try { state = JSON.parse(stateEl ? stateEl.textContent : "{}"); } catch (e) { state = { error: String(e) }; }
    const el = document.createElement("div");
    el.className = "gv-mount";
    const fallback = host.querySelector(":scope > .gv-static");
    if (fallback) {
      const svg = fallback.querySelector("svg");        // the page holds the picture once, here
      if (state.svg == null && svg) state.svg = new XMLSerializer().serializeToString(svg);
      fallback.remove();
    }
    host.append(el);
    render({ model: createModel(state), el });
  }
}

export default { render };
