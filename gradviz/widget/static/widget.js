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
 * @property {string} svg_lr         the same graph left to right ("" unless that could show it larger)
 * @property {string} rankdir        the direction asked: "auto" (svg top to bottom, svg_lr beside it) or svg's own
 * @property {Object} graph          the drawn graph (gradviz.drawing.graph.Graph.to_dict())
 * @property {Frame[]} frames        the animation, one entry per step
 * @property {number} frame          the step shown now
 * @property {boolean} playing       whether the front end steps by itself
 * @property {number} speed          steps per second
 * @property {Derivation} derivation instructor steps, forward definitions, chain rule per leaf
 * @property {"en"|"ko"} lang        language of every word
 * @property {Object<string,string>} strings  the words in lang (gradviz/widget/i18n.py)
 * @property {boolean} presenter     larger type for slides
 * @property {boolean} retain_graph  what the backward() button passes
 * @property {boolean} forward_again whether backward() first runs the forward pass again on a freed graph
 * @property {boolean} live          whether the buttons can reach Python
 * @property {string} error          why the graph could not be drawn ("" when it was)
 * @property {string} root_name      the tensor whose graph is shown
 * @property {Practice} practice     practice mode's questions and settings (practice.js); {} when off
 * @property {Object[]} answers      one record per question answered (written here, read in Python)
 * @property {Object} score          asked, answered, correct, first_try, tries, revealed
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
 * @property {boolean} [unchecked] a live press the widget did not run (nothing new to check; the caption says why)
 *
 * @typedef {Object} Derivation
 * @property {Math[]} custom  @property {Math[]} defs  @property {Math[]} where (δ = …, named once)
 * @property {Object[]} leaves
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
  zoomIn: "M7 2h2v5h5v2H9v5H7V9H2V7h5z",
  zoomOut: "M2 7h12v2H2z",
  fit: "M1 1h5v2H3v3H1zM10 1h5v5h-2V3h-3zM1 10h2v3h3v2H1zM13 10h2v5h-5v-2h3zM6 6h4v4H6z",
  full: "M1 1h5v2H3v3H1zM10 1h5v5h-2V3h-3zM1 10h2v3h3v2H1zM13 10h2v5h-5v-2h3z",
  key: "M1 2h4v3H1zM7 3h8v1H7zM1 7h4v3H1zM7 8h8v1H7zM1 12h4v3H1zM7 13h8v1H7z",
};

function setIcon(button, name) {
  button.innerHTML = `<svg viewBox="0 0 16 16" aria-hidden="true" focusable="false"><path d="${ICONS[name]}"/></svg>`;
  button.dataset.icon = name;
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

// --- markup from the state, cleaned again ---------------------------------------------------------
// A saved page or deck may hold a state nobody here wrote (a notebook from elsewhere), so what
// becomes markup is cleaned here too, whatever Python did (gradviz/widget/sanitize.py: the same
// allowlists): the SVG keeps its drawing elements, MathML is rebuilt element by element.

const SVG_TAGS = new Set(["svg", "g", "title", "desc", "text", "tspan", "path", "polygon", "polyline", "ellipse",
  "circle", "rect", "line", "defs", "linearGradient", "radialGradient", "stop", "style"]);
const MATH_TAGS = new Set(["math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "mfrac", "msqrt", "mroot",
  "msub", "msup", "msubsup", "munder", "mover", "munderover", "mtable", "mtr", "mtd", "mstyle", "mpadded",
  "mphantom", "menclose", "mmultiscripts", "mprescripts", "none", "semantics", "merror", "mlabeledtr"]);
const MATH_ATTRS = new Set(["display", "mathvariant", "stretchy", "fence", "form", "separator", "lspace",
  "rspace", "accent", "accentunder", "columnalign", "rowspacing", "columnspacing", "width", "height", "depth",
  "displaystyle", "scriptlevel", "notation", "linethickness", "minsize", "maxsize", "movablelimits", "largeop",
  "symmetric", "columnlines", "rowlines", "frame", "align", "rowalign", "mathsize", "class"]);
// anything in CSS or an attribute that could fetch (url(), an import rule, escapes that spell them),
// but a fill or stroke that names one of the drawing's own gradients
const FETCHES = /url|@\s*import|image\(|expression|\\/i;

/** Remove from a parsed SVG (in place) every element that is not drawing and every attribute that runs or loads. */
function cleanSvg(svg) {
  for (const el of [...svg.querySelectorAll("*")]) {
    if (!el.isConnected) continue;
    const ok = el.namespaceURI === svg.namespaceURI && SVG_TAGS.has(el.localName)
      && !(el.localName === "style" && FETCHES.test(el.textContent));
    if (!ok) { el.remove(); continue; }
  }
  for (const el of [svg, ...svg.querySelectorAll("*")]) {
    for (const a of [...el.attributes]) {
      const v = a.value.trim();
      if (/^on/i.test(a.name) || /href$/i.test(a.name) || a.name === "style"
          || (FETCHES.test(v) && !/^url\(#[\w.-]+\)$/.test(v))) el.removeAttribute(a.name);
    }
  }
  return svg;
}

let mathNs = null;
/** MathML's namespace, as the HTML parser puts a <math> in it. */
const MATH_NS = () => mathNs || (mathNs = new DOMParser().parseFromString("<math></math>", "text/html").querySelector("math").namespaceURI);

/** MathML markup as a fragment built with DOM calls: MathML's tags and presentation attributes, all else text. */
function cleanMath(markup) {
  const parsed = new DOMParser().parseFromString(`<body>${markup}</body>`, "text/html");  // inert: nothing loads or runs
  const ns = MATH_NS();
  const copy = (from, to) => {
    for (const child of from.childNodes) {
      if (child.nodeType === Node.TEXT_NODE) { to.append(document.createTextNode(child.data)); continue; }
      if (child.nodeType !== Node.ELEMENT_NODE) continue;
      if (child.namespaceURI === ns && MATH_TAGS.has(child.localName)) {
        const el = document.createElementNS(ns, child.localName);
        for (const a of child.attributes) if (MATH_ATTRS.has(a.name)) el.setAttribute(a.name, a.value);
        copy(child, el);
        to.append(el);
      } else if (!/^(script|style|template|noscript|iframe|object|embed)$/i.test(child.localName)) {
        copy(child, to);              // another element: its text only
      }
    }
    return to;
  };
  return copy(parsed.body, document.createDocumentFragment());
}

// --- the SVG -------------------------------------------------------------------------------------

/** Parse the drawing into the graph box; index nodes, edges and text slots; make ids unique. */
function mountSvg(box, svgText, uid) {
  box.textContent = "";
  const index = { nodes: new Map(), edges: new Map(), slots: new Map(), svg: null, natural: null, minFont: 14 };
  if (!svgText) return index;
  const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
  const svg = doc.documentElement;
  if (!svg || svg.nodeName !== "svg" || doc.querySelector("parsererror")) return index;
  cleanSvg(svg);
  const node = document.importNode(svg, true);
  // sizes in the SVG's own units (Graphviz: points): zoom is screen px per unit, so a text's
  // size on screen is its font-size times the zoom (times any transform around the widget)
  const px = (v) => { const m = /^([\d.]+)(pt|px)?$/.exec(v || ""); return m ? +m[1] : 0; };
  const vb = (node.getAttribute("viewBox") || "").trim().split(/[\s,]+/).map(Number);
  index.natural = vb.length === 4 && vb[2] > 0 && vb[3] > 0 ? { w: vb[2], h: vb[3] }
    : { w: px(node.getAttribute("width")), h: px(node.getAttribute("height")) };
  index.minFont = Infinity;
  for (const t of node.querySelectorAll("text[font-size]")) index.minFont = Math.min(index.minFont, +t.getAttribute("font-size") || Infinity);
  if (!Number.isFinite(index.minFont)) index.minFont = 14;
  node.removeAttribute("width");
  node.removeAttribute("height");
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
  fitSlot(holder);
  return holder;
}

/** Keep a node's text inside its box: Graphviz sized the box for the text laid out first, and a
 *  later value (a live press after training, a .grad that accumulated) may be longer.  A line that
 *  would cross the box's right edge is narrowed to it (its glyphs and spacing, never its height),
 *  or, when far too long for that, cut with … as PyTorch's repr cuts; the full value is the slot's tooltip.  Not measured while the widget is not rendered (0 wide). */
function fitSlot(holder) {
  const g = holder.closest && holder.closest("g.gv-node");
  const shape = g && g.querySelector(".gv-shape");
  if (!shape || typeof shape.getBBox !== "function") return;
  let box;
  try { box = shape.getBBox(); } catch (e) { return; }
  if (!box || !box.width) return;
  const right = box.x + box.width - 3;               // (inside the rounded corner and the stroke)
  for (const t of holder.querySelectorAll("text")) {
    t.removeAttribute("textLength");
    t.removeAttribute("lengthAdjust");
    if ((t.getAttribute("text-anchor") || "start") !== "start" || typeof t.getComputedTextLength !== "function") continue;
    const room = right - (+t.getAttribute("x") || 0);
    let width = t.getComputedTextLength();
    if (!(width > room + 0.5 && room > 0)) continue;
    if (room / width < 0.75) {        // much too long to narrow legibly: cut it, as PyTorch's repr does, with …
      const text = t.textContent, keep = Math.max(1, Math.floor(text.length * room / width / 0.85) - 1);
      t.textContent = text.slice(0, keep).trimEnd() + "…";
      width = t.getComputedTextLength();
    }
    if (width > room + 0.5) {
      t.setAttribute("textLength", room.toFixed(2));
      t.setAttribute("lengthAdjust", "spacingAndGlyphs");
    }
  }
}

/** Dark fallback colours for a page outside JupyterLab whose reader prefers a dark scheme. */
function followScheme(root, svg) {
  const inLab = document.body && document.body.hasAttribute("data-jp-theme-light");
  const dark = !inLab && typeof matchMedia === "function" && matchMedia("(prefers-color-scheme: dark)").matches;
  root.classList.toggle("gv-dark-fallback", dark);
  if (svg) svg.classList.toggle("gv-dark", dark);
}

/** An arrowhead at an edge's input end, pointing there: the way a gradient goes in backward.
 *  Made the first time the edge carries a gradient (Graphviz drew the path input -> op). */
function reverseHead(edge) {
  let head = edge.querySelector(":scope > .gv-back-head");
  if (head) return head;
  const path = edge.querySelector("path.gv-stroke");
  if (!path || typeof path.getTotalLength !== "function") return null;
  const len = path.getTotalLength();
  if (!len) return null;
  const p0 = path.getPointAtLength(0), p1 = path.getPointAtLength(Math.min(len, 6));
  let dx = p0.x - p1.x, dy = p0.y - p1.y;
  const d = Math.hypot(dx, dy) || 1;
  dx /= d; dy /= d;
  const L = 10, W = 4.2, bx = p0.x - dx * L, by = p0.y - dy * L;
  head = document.createElementNS(edge.namespaceURI, "polygon");
  head.setAttribute("points", `${p0.x},${p0.y} ${bx - dy * W},${by + dx * W} ${bx + dy * W},${by - dx * W}`);
  head.setAttribute("class", "gv-back-head");
  edge.append(head);
  return head;
}

// --- the widget, in parts -----------------------------------------------------------------------
//
// render() builds five parts and wires them: the controls (transport, scrubber, speed), the
// picture (the SVG with zoom, pan, fullscreen and the key), the derivation panel (chain rule,
// factors in step, the check), the talk (caption, live buttons) and the player (which step is
// shown, playing, keys).  Each part gets `ctx` ({model, S, uid, root, and what the others offer:
// current, go, stop, refollow}) and returns its elements and the functions the others call.

/** Transport buttons, scrubber with the phase track, phase, step count, speed. */
function createControls(ctx) {
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
  const phase = h("span", { class: "gv-phase", "data-gv": "phase" });
  const speed = h("select", { class: "gv-speed", "data-gv": "speed" });
  for (const s of SPEEDS) speed.append(h("option", { value: String(s), text: `${s}×` }));
  const track = h("div", { class: "gv-track", "data-gv": "track", "aria-hidden": "true" });
  const el = h("div", { class: "gv-bar" },
    h("div", { class: "gv-transport" }, b.toForward, b.back, b.play, b.step, b.toBackward),
    h("div", { class: "gv-scrubwrap" }, scrub, track),
    h("div", { class: "gv-meta" }, phase, count, speed));

  function labels() {
    const s = ctx.S();
    const set = (e, key) => { e.setAttribute("aria-label", s[key] || key); e.title = s[key] || key; };
    set(b.toForward, "to_forward"); set(b.back, "step_back"); set(b.step, "step_forward");
    set(b.toBackward, "to_backward"); set(scrub, "scrubber"); set(speed, "speed");
  }

  function setSpeed(sp) {
    speed.value = String(SPEEDS.reduce((a, c) => (Math.abs(c - sp) < Math.abs(a - sp) ? c : a), SPEEDS[0]));
  }

  // which backward() call of the user's each run is, as its captions count them ("backward() call 2";
  // 0: animate()'s own pass): the phase label says the same number
  let callOf = new Map();
  function setFrames(frames) {
    callOf = new Map();
    for (const f of frames) {
      const call = f.kind === "seed" && Array.isArray(f.msg) && f.msg[1] ? f.msg[1].run : undefined;
      if (call !== undefined && f.run !== null && f.run !== undefined) callOf.set(f.run, +call);
    }
    scrub.max = String(Math.max(0, frames.length - 1));
    track.textContent = "";
    let start = 0;
    for (let k = 1; k <= frames.length; k++) {
      if (k === frames.length || frames[k].phase !== frames[start].phase) {
        const seg = h("span", { class: `gv-seg gv-seg-${frames[start].phase}` });
        seg.style.flexGrow = String(k - start);
        track.append(seg);
        start = k;
      }
    }
  }

  function show(f, k, n, captionText) {
    const s = ctx.S();
    scrub.value = String(k);
    count.textContent = fmt(s, "step_of", { i: k + 1, n });
    scrub.setAttribute("aria-valuetext", `${count.textContent}: ${captionText}`);
    const key = { forward: "forward_pass", backward: "backward_pass", start: "start" }[f.phase];
    const call = f.phase === "backward" && f.run !== null && f.run !== undefined ? callOf.get(f.run) : undefined;
    phase.textContent = key ? s[key] + (call ? ` #${call}` : "") : "";
    phase.dataset.phase = f.phase;
  }

  function showPlaying(on) {
    const s = ctx.S();
    setIcon(b.play, on ? "pause" : "play");
    b.play.setAttribute("aria-label", on ? s.pause || "Pause" : s.play || "Play");
    b.play.title = b.play.getAttribute("aria-label");
    b.play.setAttribute("aria-pressed", on ? "true" : "false");
  }

  return { el, b, scrub, speed, labels, setSpeed, setFrames, show, showPlaying };
}

// the legend: [swatch kind, its words' key in strings (gradviz/widget/i18n.py)]
const LEGEND = [["leaf", "key_leaf"], ["const", "key_const"], ["root", "key_root"], ["op", "key_op"],
  ["shape", "key_shape"], ["focus", "key_focus"], ["lit", "key_lit"], ["fwd", "key_fwd"], ["bwd", "key_bwd"]];

function swatch(kind) {
  const shapes = {
    leaf: '<rect class="gv-k-leaf" x="2" y="3" width="26" height="14" rx="4"/>',
    const: '<rect class="gv-k-const" x="2" y="3" width="26" height="14" rx="4"/>',
    root: '<rect class="gv-k-root" x="2" y="3" width="26" height="14" rx="4"/>',
    op: '<ellipse class="gv-k-op" cx="15" cy="10" rx="13" ry="7"/>',
    shape: '<text class="gv-k-text" x="15" y="14" text-anchor="middle">[2]</text>',
    focus: '<rect class="gv-k-focus" x="2" y="3" width="26" height="14" rx="4"/>',
    lit: '<rect class="gv-k-lit" x="2" y="3" width="26" height="14" rx="4"/>',
    fwd: '<path class="gv-k-fwd" d="M2 10h20"/><path class="gv-k-fwdh" d="M28 10l-7-4v8z"/>',
    bwd: '<path class="gv-k-bwd" d="M8 10h20"/><path class="gv-k-bwdh" d="M2 10l7-4v8z"/>',
  };
  const span = h("span", { class: "gv-k-swatch", "aria-hidden": "true" });
  span.innerHTML = `<svg viewBox="0 0 30 20" width="30" height="20">${shapes[kind]}</svg>`;
  return span;
}

/** The graph: the SVG in a box that zooms (ctrl/pinch + wheel, +/−, fit), pans (drag, scroll),
 *  goes fullscreen, keeps the step in view, and lights a frame's nodes and edges. */
function createPicture(ctx) {
  const { model, uid } = ctx;
  const tool = (name, icon) => {
    const el = h("button", { type: "button", class: "gv-btn gv-tool", "data-gv": name });
    setIcon(el, icon);
    return el;
  };
  const t = { out: tool("zoom-out", "zoomOut"), in: tool("zoom-in", "zoomIn"), fit: tool("fit", "fit"),
              full: tool("fullscreen", "full"), key: tool("key", "key") };
  t.key.setAttribute("aria-expanded", "false");
  const box = h("div", { class: "gv-graph", "data-gv": "graph" });
  const fatal = h("div", { class: "gv-fatal", role: "alert", "data-gv": "fatal", hidden: true });
  const legend = h("div", { class: "gv-legend", "data-gv": "legend", hidden: true });
  const tools = h("div", { class: "gv-tools" }, t.out, t.in, t.fit, t.full, t.key);
  // said whenever the box shows part of the graph (too big to fit at a readable size, or zoomed in)
  const partial = h("div", { class: "gv-partial", "data-gv": "partial", hidden: true });
  const el = h("div", { class: "gv-graphcol" }, fatal, box, partial, legend);   // (tools go in the bar)

  let index = mountSvg(box, "", uid);
  // the drawings the traits hold, by direction: svg's own ("TB" under rankdir "auto") and, when there
  // is one, svg_lr; one of them is in the box (`shownDir`), chosen by chooseLayout for the box
  let drawings = new Map(), sizes = [], shownDir = null;
  let zoom = 1;
  let userZoom = false;            // after +/−/fit/wheel the zoom stays the user's, else it follows the box
  let note = null;                 // what the line under the box says (say)
  let lit = [];
  let geo = null;                  // id -> [x0, y0, x1, y1] in the SVG's units (measure)
  const view = { w: 0, h: 0, x: 0, y: 0 };   // the box's size and scroll, known without a layout

  const presenter = () => !!model.get("presenter");
  /** Screen px per CSS px around the widget (a slide deck scales its slides). */
  function outer() {
    const r = box.getBoundingClientRect();
    return box.offsetWidth ? r.width / box.offsetWidth : 1;
  }
  function fitZoom() {
    const nat = index.natural;
    if (!nat || !nat.w || !box.clientWidth) return 1;
    return Math.max(0.05, Math.min((box.clientWidth - 6) / nat.w, (box.clientHeight - 6) / nat.h));
  }
  /** The zoom at which the smallest text is as large as the widget promises: 11 screen px (and,
   *  presenting, 11 px of the slide's own size too, whatever the window that shows the deck). */
  function readableZoom() {
    const screen = 11.2 / (index.minFont * (outer() || 1));
    return presenter() ? Math.max(screen, 11.2 / index.minFont) : screen;
  }
  /** The default: the whole graph if it is readable so, else readable (the box then pans). */
  function defaultZoom() {
    const r = readableZoom();
    return Math.max(r, Math.min(fitZoom(), r * 1.7));
  }

  function setZoom(z, anchor) {
    const nat = index.natural;
    if (!index.svg || !nat || !nat.w) return;
    z = Math.max(Math.min(fitZoom(), readableZoom()) * 0.5, Math.min(readableZoom() * 5, z));
    const o = outer() || 1;
    const r = box.getBoundingClientRect();
    const ax = anchor ? (anchor.x - r.left) / o : box.clientWidth / 2;
    const ay = anchor ? (anchor.y - r.top) / o : box.clientHeight / 2;
    const cx = (box.scrollLeft + ax - pad(box.clientWidth, nat.w * zoom)) / zoom;
    const cy = (box.scrollTop + ay - pad(box.clientHeight, nat.h * zoom)) / zoom;
    zoom = z;
    index.svg.style.width = `${Math.round(nat.w * z)}px`;
    index.svg.style.height = `${Math.round(nat.h * z)}px`;
    box.scrollLeft = cx * z + pad(box.clientWidth, nat.w * z) - ax;
    box.scrollTop = cy * z + pad(box.clientHeight, nat.h * z) - ay;
    el.dataset.zoom = z.toFixed(3);
    sizeView();
    // (the step followed: the note says at which zoom, the student's after a hand zoom)
    if (!note || note[0].startsWith("graph_partial")) say(null);
  }
  const pad = (room, size) => Math.max(0, (room - size) / 2);   // a small picture sits centred

  function relayout() {
    if (!userZoom) setZoom(defaultZoom());
    else sizeView();
    // (a text set while the widget was not rendered could not be measured: fit it now)
    if (index && index.svg) for (const holder of index.slots.values()) if (!holder.classList.contains("gv-hidden")) fitSlot(holder);
  }

  function load(svgText) {
    index = mountSvg(box, svgText, uid);
    lit = [];
    geo = null;
    userZoom = false;
    followScheme(ctx.root, index.svg);
    relayout();
  }

  /** The traits' drawings anew: {direction: SVG text}, the first one the default.  Each one's
   *  natural size is read off its viewBox now: a drawing is mounted only when it is shown. */
  function setDrawings(byDir) {
    drawings = new Map(Object.entries(byDir).filter(([, text]) => text));
    if (!drawings.size) drawings.set(Object.keys(byDir)[0] || "TB", "");
    sizes = [];
    for (const [dir, text] of drawings) {
      const m = /<svg\b[^>]*?\bviewBox="\s*[-\d.e]+[\s,]+[-\d.e]+[\s,]+([\d.e]+)[\s,]+([\d.e]+)/.exec(text);
      if (m && +m[1] > 0 && +m[2] > 0) sizes.push([dir, { w: +m[1], h: +m[2] }]);
    }
    if (sizes.length !== drawings.size) sizes = [[drawings.keys().next().value, null]];   // (then no choice)
    shownDir = null;
  }
  /** [direction, natural size] of each drawing held, the default first. */
  const candidates = () => sizes;
  /** Show the drawing of direction `dir` (the default when it has none); whether the picture changed. */
  function use(dir) {
    if (!drawings.has(dir)) dir = drawings.keys().next().value;
    if (dir === shownDir) return false;
    shownDir = dir;
    ctx.root.dataset.gvRankdir = dir;           // (data-gv-rankdir: the direction drawn, for tests and CSS)
    load(drawings.get(dir));
    return true;
  }

  function light(f) {
    for (const e of lit) e.classList.remove("gv-focus", "gv-lit", "gv-lit-edge", "gv-lit-fwd");
    lit = [];
    const mark = (id, cls, map) => {
      const e = map.get(id);
      if (e) { e.classList.add(cls); lit.push(e); }
    };
    for (const id of f.lit || []) mark(id, "gv-lit", index.nodes);
    for (const id of f.focus || []) mark(id, "gv-focus", index.nodes);
    // one class per phase on the edges themselves: nothing above them changes, so no big restyle
    const back = f.phase !== "forward" && !(index.svg && index.svg.classList.contains("gv-pytorch"));
    for (const id of f.edges || []) {
      mark(id, f.phase === "forward" ? "gv-lit-fwd" : "gv-lit-edge", index.edges);
      if (back && index.edges.get(id)) reverseHead(index.edges.get(id));
    }
  }

  /** Where each node and edge is, in the SVG's units: measured once per drawing (positions do
   *  not change with the zoom), so following the step costs no layout. */
  function measure() {
    geo = new Map();
    const nat = index.natural;
    if (!index.svg || !nat || !nat.w) return;
    const s = index.svg.getBoundingClientRect();
    const k = s.width / nat.w;
    if (!k) { geo = null; return; }
    for (const map of [index.nodes, index.edges]) {
      for (const [id, e] of map) {
        const r = e.getBoundingClientRect();
        geo.set(id, [(r.left - s.left) / k, (r.top - s.top) / k, (r.right - s.left) / k, (r.bottom - s.top) / k]);
      }
    }
  }
  function sizeView() {
    view.w = box.clientWidth; view.h = box.clientHeight; view.x = box.scrollLeft; view.y = box.scrollTop;
    const nat = index.natural;
    // (Graphviz's margin around the drawing may be cut by a few px: no node is)
    const whole = !index.svg || !nat || !nat.w || (nat.w * zoom <= view.w + 8 && nat.h * zoom <= view.h + 8);
    if (partial.hidden !== whole) partial.hidden = whole;
  }
  /** Whether the whole graph is in the box now. */
  const wholeShown = () => partial.hidden;
  box.addEventListener("scroll", () => { view.x = box.scrollLeft; view.y = box.scrollTop; }, { passive: true });

  /** Keep the step in sight: scroll the box (never the page) so the step's nodes are in view; at
   *  an end of the animation (`ends`: its first frame, a backward pass done, its last frame) the
   *  output and the leaves instead (frameEnds).  Once per animation frame, for the last step asked
   *  (scrubbing fast scrolls once). */
  let pendingFollow = null;
  function follow(f, smooth, ends) {
    const first = !pendingFollow;
    pendingFollow = { f, smooth, ends };
    if (!first) return;
    const run = () => { const p = pendingFollow; pendingFollow = null; if (p) followNow(p.f, p.smooth, p.ends); };
    if (typeof requestAnimationFrame === "function") requestAnimationFrame(run); else run();
  }
  function followNow(f, smooth, ends) {
    const nat = index.natural;
    if (!index.svg || !nat || !nat.w) return say(null);
    const W = nat.w * zoom, H = nat.h * zoom;
    if (W <= view.w + 1 && H <= view.h + 1) {
      if (ends) endsShown(endsOf().leaves);        // (the whole graph: every leaf in view)
      return say(null);
    }
    if (!geo) measure();
    if (!geo) return say(null);
    if (ends && frameEnds(f, smooth)) return;
    say(null);
    // the step's nodes and edges in view; when they are more than the box holds, its focus (the
    // node the step is about), with as much of the rest as fits around it
    const all = bounds([...(f.focus || []), ...(f.lit || []), ...(f.edges || [])]);
    if (!all) return;
    const px = (b) => [b[0] * zoom + pad(view.w, W), b[1] * zoom + pad(view.h, H), b[2] * zoom + pad(view.w, W), b[3] * zoom + pad(view.h, H)];
    const seen = (b) => b[0] >= view.x && b[2] <= view.x + view.w && b[1] >= view.y && b[3] <= view.y + view.h;
    const a = px(all);
    if (a[2] - a[0] <= view.w && a[3] - a[1] <= view.h) {
      if (!seen(a)) scrollTo((a[0] + a[2] - view.w) / 2, (a[1] + a[3] - view.h) / 2, smooth);
      return;
    }
    const fb = bounds(f.focus || []), c = fb ? px(fb) : a;
    if (seen(c)) return;
    const place = (lo, hi, mid, size) => hi - lo > size - 8 ? (lo + hi - size) / 2
      : Math.max(hi + 4 - size, Math.min(lo - 4, mid - size / 2));
    scrollTo(place(c[0], c[2], (a[0] + a[2]) / 2, view.w), place(c[1], c[3], (a[1] + a[3]) / 2, view.h), smooth);
  }
  /** The box around the nodes and edges `ids` (SVG units), or null. */
  function bounds(ids) {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const id of ids) {
      const g = geo.get(id);
      if (!g) continue;
      x0 = Math.min(x0, g[0]); y0 = Math.min(y0, g[1]); x1 = Math.max(x1, g[2]); y1 = Math.max(y1, g[3]);
    }
    return x0 === Infinity ? null : [x0, y0, x1, y1];
  }
  function scrollTo(x, y, smooth) {
    const nat = index.natural;
    x = Math.max(0, Math.min(nat.w * zoom - view.w, x));
    y = Math.max(0, Math.min(nat.h * zoom - view.h, y));
    if (Math.abs(x - view.x) < 1 && Math.abs(y - view.y) < 1) return;
    view.x = x; view.y = y;          // where it goes (a smooth scroll reports its way there)
    box.scrollTo({ left: x, top: y, behavior: smooth && !reduceMotion() ? "smooth" : "auto" });
  }

  /** The ends of the graph in the drawing shown: its output (the backward root; a node may be
   *  both) and its leaves, by the classes Python drew them with. */
  function endsOf() {
    const roots = [], leaves = [];
    for (const [id, g] of index.nodes) {
      if (g.classList.contains("gv-root")) roots.push(id);
      else if (g.classList.contains("gv-leaf")) leaves.push(id);
    }
    return { roots, leaves };
  }
  /** Where a window vw × vh (SVG units) over the drawing shows the output whole and the most
   *  leaves whole, `m` units in from its sides (ties: the window whose centre is nearest `anchor`,
   *  [x, y]): { x, y, shown: the leaves in it, roots: the output's box }.  Along an axis the whole
   *  drawing fits in, x (or y) is null: nothing to scroll there.  Null without an output. */
  function endsWindow(vw, vh, m, anchor) {
    const nat = index.natural, ends = endsOf();
    const root = bounds(ends.roots);
    if (!root) return null;
    const leaves = ends.leaves.map((id) => [id, geo.get(id)]).filter(([, g]) => g);
    // (where a leaf touches a side: of the 40 leaves nearest the anchor, for a graph with hundreds)
    const gap = (g) => ((g[0] + g[2]) / 2 - anchor[0]) ** 2 + ((g[1] + g[3]) / 2 - anchor[1]) ** 2;
    const near = leaves.length <= 40 ? leaves : [...leaves].sort((p, q) => gap(p[1]) - gap(q[1])).slice(0, 40);
    // one axis: the window's possible starts (it holds the output if it can), then the candidates:
    // where a leaf touches one side, and the anchor in the middle (the nearest start of each run
    // of equal counts is one of them)
    const axis = (a, size, total) => {
      if (total <= size) return { free: true, starts: [0] };
      const far = total - size;
      let lo = Math.max(0, root[a + 2] - size + m), hi = Math.min(far, root[a] - m);
      if (lo > hi) { lo = hi = Math.max(0, Math.min(far, (root[a] + root[a + 2] - size) / 2)); }
      const starts = new Set([lo, hi, Math.max(lo, Math.min(hi, anchor[a] - size / 2))]);
      for (const [, g] of near) for (const v of [g[a] - m, g[a + 2] - size + m]) if (v > lo && v < hi) starts.add(v);
      return { free: false, starts: [...starts] };
    };
    const ax = axis(0, vw, nat.w), ay = axis(1, vh, nat.h);
    const inside = (g, x, y) => (ax.free || (g[0] >= x + m - 0.5 && g[2] <= x + vw - m + 0.5))
      && (ay.free || (g[1] >= y + m - 0.5 && g[3] <= y + vh - m + 0.5));
    let best = null;
    for (const x of ax.starts) {
      for (const y of ay.starts) {
        let k = 0;
        for (const [, g] of leaves) if (inside(g, x, y)) k++;
        const d = (ax.free ? 0 : (x + vw / 2 - anchor[0]) ** 2) + (ay.free ? 0 : (y + vh / 2 - anchor[1]) ** 2);
        if (!best || k > best.k || (k === best.k && d < best.d - 1e-6)) best = { k, d, x, y };
      }
    }
    const shown = (x, y) => leaves.filter(([, g]) => inside(g, x, y)).map(([id]) => id);
    return { x: ax.free ? null : best.x, y: ay.free ? null : best.y, shown, inside, root,
             leaves: leaves.length, count: best.k };
  }
  /** How many leaves are seen with the output in a box w × h (CSS px) at zoom z, and of how many:
   *  [shown, leaves] (chooseLayout weighs layouts by it when the graph is shown in part). */
  function endsShownIn(w, h, z) {
    if (!index.svg || !index.natural || !index.natural.w || !z) return null;
    if (!geo) measure();
    if (!geo) return null;
    const e = endsOf(), a = bounds(e.leaves) || bounds(e.roots);
    const win = a && endsWindow(w / z, h / z, 4 / z, [(a[0] + a[2]) / 2, (a[1] + a[3]) / 2]);
    return win ? [win.count, win.leaves] : null;
  }
  /** At an end of the animation, a graph shown in part: the output, and as many leaves as fit
   *  with it around the step's nodes, in view; the note says what is shown.  The view is left as
   *  it is (the student's own place) when it already shows the output and as many leaves.
   *  Whether it did (else the step is followed as any other). */
  function frameEnds(f, smooth) {
    for (let again = 0; again < 2; again++) {
      const nat = index.natural;
      const W = nat.w * zoom, H = nat.h * zoom, m = 4 / zoom;
      if (W <= view.w + 1 && H <= view.h + 1) return false;
      const near = bounds([...(f.focus || []), ...(f.lit || [])]) || bounds(endsOf().leaves);
      const anchor = near ? [(near[0] + near[2]) / 2, (near[1] + near[3]) / 2] : [nat.w / 2, nat.h / 2];
      const win = endsWindow(view.w / zoom, view.h / zoom, m, anchor);
      if (!win) return false;
      // the window the box shows now, in SVG units
      const x = (view.x - pad(view.w, W)) / zoom, y = (view.y - pad(view.h, H)) / zoom;
      let shown = win.shown(x, y);
      if (!win.inside(win.root, x, y) || shown.length < win.count) {
        scrollTo(win.x === null ? view.x : win.x * zoom, win.y === null ? view.y : win.y * zoom, smooth);
        shown = win.shown(win.x === null ? 0 : win.x, win.y === null ? 0 : win.y);
      }
      const n = win.leaves, size = [view.w, view.h].join();
      say(!n ? null : shown.length === n ? ["graph_ends_all", { n }]
        : shown.length ? ["graph_ends_some", { k: shown.length, n }] : ["graph_ends_none", { n }]);
      if ([view.w, view.h].join() === size) { endsShown(shown); break; }   // (else the note took another line: again)
    }
    return true;
  }
  /** At an end of the animation: tell the derivation panel which leaves (their names) are in
   *  view, so that it shows their checks (ctx.endsShown). */
  function endsShown(ids) {
    if (!ctx.endsShown) return;
    const name = (id) => {
      const slot = index.slots.get(`${id}-name`);
      return slot ? [...slot.querySelectorAll("text")].map((t) => t.textContent).join("").trim() : "";
    };
    ctx.endsShown(ids.map(name).filter(Boolean));
  }
  /** The note under a graph shown in part: what it shows ([key, args]), or null: it follows the
   *  step, at a readable size (graph_partial) or, once the student zoomed by hand (−, +, the
   *  wheel, a pinch), at the zoom they chose (graph_partial_own: no longer "readable" after −). */
  const following = () => [userZoom ? "graph_partial_own" : "graph_partial", {}];
  function say(msg) {
    msg = msg || following();
    const same = JSON.stringify(msg) === JSON.stringify(note);
    note = msg;
    if (same) return;
    showNote();
    // (the note may take another line: the box is then smaller)
    if (box.clientHeight !== view.h || box.clientWidth !== view.w) sizeView();
  }
  function showNote() {
    const [key, args] = note || following();
    partial.textContent = fmt(ctx.S(), key, args);
    partial.dataset.gvNote = key;
  }

  // zoom: buttons, ctrl + wheel (a trackpad's pinch arrives as one); pan: drag with the mouse
  const byUser = (z, anchor) => { userZoom = true; setZoom(z, anchor); ctx.refollow(); };
  t.in.addEventListener("click", () => byUser(zoom * 1.25));
  t.out.addEventListener("click", () => byUser(zoom / 1.25));
  t.fit.addEventListener("click", () => { userZoom = true; setZoom(fitZoom()); });
  box.addEventListener("wheel", (ev) => {
    if (!ev.ctrlKey && !ev.metaKey) return;        // a plain wheel scrolls, as everywhere
    ev.preventDefault();
    userZoom = true;
    setZoom(zoom * Math.exp(-ev.deltaY * 0.0025), { x: ev.clientX, y: ev.clientY });
  }, { passive: false });
  let drag = null;
  box.addEventListener("pointerdown", (ev) => {
    ctx.root.focus({ preventScroll: true });        // a click on the picture gives the widget the keyboard
    if (ev.pointerType !== "mouse" || ev.button !== 0) return;
    drag = { x: ev.clientX, y: ev.clientY, left: box.scrollLeft, top: box.scrollTop, id: ev.pointerId, moved: false };
  });
  box.addEventListener("pointermove", (ev) => {
    if (!drag || ev.pointerId !== drag.id) return;
    const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    if (!drag.moved) { drag.moved = true; box.setPointerCapture(ev.pointerId); box.classList.add("gv-panning"); }
    const o = outer() || 1;
    box.scrollLeft = drag.left - dx / o;
    box.scrollTop = drag.top - dy / o;
  });
  const endDrag = () => { drag = null; box.classList.remove("gv-panning"); };
  box.addEventListener("pointerup", endDrag);
  box.addEventListener("pointercancel", endDrag);
  // two fingers on a touch screen: pinch zooms around their middle (one finger scrolls natively;
  // touch-action in widget.css keeps the browser from zooming the whole page instead)
  const touches = new Map();
  let pinch = null;
  const spread = () => { const [a, b] = [...touches.values()]; return Math.hypot(a.x - b.x, a.y - b.y); };
  box.addEventListener("pointerdown", (ev) => {
    if (ev.pointerType !== "touch") return;
    touches.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    if (touches.size === 2) pinch = { d: spread(), z: zoom };
  });
  box.addEventListener("pointermove", (ev) => {
    if (!touches.has(ev.pointerId)) return;
    touches.set(ev.pointerId, { x: ev.clientX, y: ev.clientY });
    if (!pinch || touches.size !== 2 || !pinch.d) return;
    const [a, b] = [...touches.values()];
    userZoom = true;
    setZoom(pinch.z * spread() / pinch.d, { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 });
  });
  const lift = (ev) => { touches.delete(ev.pointerId); if (touches.size < 2) pinch = null; };
  box.addEventListener("pointerup", lift);
  box.addEventListener("pointercancel", lift);

  t.full.addEventListener("click", () => {
    const doc = ctx.root.ownerDocument;
    if (doc.fullscreenElement) doc.exitFullscreen();
    else if (ctx.root.requestFullscreen) ctx.root.requestFullscreen().catch(() => {});
  });
  t.key.addEventListener("click", () => {
    legend.hidden = !legend.hidden;
    t.key.setAttribute("aria-expanded", legend.hidden ? "false" : "true");
  });

  function labels() {
    const s = ctx.S();
    const set = (e, key) => { e.setAttribute("aria-label", s[key] || key); e.title = s[key] || key; };
    set(t.in, "zoom_in"); set(t.out, "zoom_out"); set(t.fit, "zoom_fit"); set(t.full, "fullscreen");
    set(t.key, "key_title");
    box.setAttribute("aria-label", s.graph_label || "");
    showNote();
    legend.textContent = "";
    for (const [kind, key] of LEGEND) {
      legend.append(h("div", { class: "gv-k-row" }, swatch(kind), h("span", { text: s[key] || key })));
    }
  }

  function showFatal(text) {
    fatal.hidden = !text;
    fatal.textContent = text || "";
  }

  return {
    el, box, tools, load, light, follow, relayout, labels, showFatal, readableZoom, wholeShown, endsShownIn,
    setDrawings, candidates, use, direction: () => shownDir, userZoomed: () => userZoom,
    index: () => index, natural: () => index.natural, zoom: () => zoom,
    slots: { set: (key, text) => setSlotText(index, key, text), node: (id) => index.nodes.get(id),
             edge: (id) => index.edges.get(id), pytorch: () => !!(index.svg && index.svg.classList.contains("gv-pytorch")) },
  };
}

/** The chain rule by hand: instructor steps, forward definitions, per leaf its paths (factors
 *  that light up in step, and jump there when clicked), the running product, and the check. */
function createDerivationPanel(ctx) {
  const el = h("aside", { class: "gv-deriv", "data-gv": "derivation" });
  const soFar = h("div", { class: "gv-sofar", "data-gv": "so-far", hidden: true });
  let checkEls = new Map(), leafEls = new Map(), factorEls = new Map();
  let factorFrames = new Map();     // "leaf:path:k" -> frames applying that factor
  let shownChecks = new Map();       // leaf -> check value shown
  let litFactors = [];
  let soFarKey = "";
  let revealed = null;              // what show() last scrolled into view
  let atEnd = false, endLeaves = null, last = null;   // at an end: the leaves the graph shows (showEnds)

  function mathEl(m, cls = "gv-math") {
    const d = h("div", { class: cls });
    if (m && m.mathml) d.append(cleanMath(m.mathml));
    else if (m && m.latex) d.textContent = m.latex;
    return d;
  }

  function factorRow(leaf, i, p) {
    const row = h("div", { class: "gv-math gv-factors" });
    p.factors.forEach((fa, k) => {
      if (k) row.append(h("span", { class: "gv-dot", "aria-hidden": "true", text: "·" }));
      const key = `${leaf.leaf}:${i}:${k}`;
      const chip = h("button", { type: "button", class: "gv-factor", "data-gv-factor": key, title: fa.value || "" });
      if (fa.mathml) chip.append(cleanMath(fa.mathml)); else chip.textContent = fa.latex || "";
      chip.addEventListener("click", () => jumpTo(key));
      factorEls.set(key, chip);
      row.append(chip);
    });
    return row;
  }

  function build() {
    const s = ctx.S();
    const d = ctx.model.get("derivation") || {};
    el.textContent = "";
    checkEls = new Map(); leafEls = new Map(); factorEls = new Map(); litFactors = [];
    soFarKey = "";
    soFar.textContent = "";
    revealed = null;
    el.append(h("h3", { class: "gv-dtitle", text: s.derivation_title || "" }));
    if (d.custom && d.custom.length) {
      const sec = h("div", { class: "gv-custom" }, h("h4", { text: s.instructor_title || "" }));
      for (const m of d.custom) sec.append(mathEl(m, "gv-math gv-display"));
      el.append(sec);
    }
    if (d.defs && d.defs.length) {
      const sec = h("details", { class: "gv-defs", open: true }, h("summary", { text: s.forward_defs || "" }));
      for (const m of d.defs) sec.append(mathEl(m));
      if (d.defs_more) sec.append(h("div", { class: "gv-more", text: fmt(s, "lines_more", { n: d.defs_more }) }));
      el.append(sec);
    }
    // a gradient named once (δ = ∂loss/∂ŷ = …), so the long matrix formulas below fit a line
    if (d.where && d.where.length) {
      const sec = h("div", { class: "gv-where" });
      for (const m of d.where) sec.append(mathEl(m));
      el.append(sec);
    }
    for (const leaf of d.leaves || []) {
      const sec = h("div", { class: "gv-dleaf", "data-leaf": leaf.leaf });
      const many = (leaf.paths || []).length > 1;
      (leaf.paths || []).forEach((p, i) => {
        const grid = h("div", { class: "gv-stages" });
        if (many) grid.append(h("div", { class: "gv-pathno", text: fmt(s, "path_n", { k: i + 1 }) }));
        (p.stages || []).forEach((m, j) => {
          const body = j === 0 && Array.isArray(p.factors) && p.factors.length ? factorRow(leaf, i, p) : mathEl(m);
          grid.append(j === 0 ? mathEl(leaf.lhs, "gv-math gv-lhs") : h("span", {}),
            h("span", { class: "gv-eq", text: "=" }), body);
        });
        if (p.term && many) grid.append(h("span", {}), h("span", { class: "gv-eq", text: "→" }), mathEl(p.term, "gv-math gv-term"));
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
      el.append(sec);
    }
    if (d.leaves_more) el.append(h("div", { class: "gv-more", text: `… +${d.leaves_more}` }));
    if (d.error) el.append(h("div", { class: "gv-more", text: fmt(s, "no_derivation", { reason: d.error }) }));
    for (const [leaf, v] of shownChecks) applyCheck(leaf, v, false);
  }

  function indexFrames(frames) {
    factorFrames = new Map();
    frames.forEach((f, k) => {
      for (const key of (f.chain && f.chain.factors) || []) {
        const name = Array.isArray(key) ? key.join(":") : String(key);
        if (!factorFrames.has(name)) factorFrames.set(name, []);
        factorFrames.get(name).push(k);
      }
    });
  }

  /** A click on a factor: the frame of the backward() call shown now that applies it. */
  function jumpTo(key) {
    const at = factorFrames.get(key);
    if (!at || !at.length) return;
    const frames = ctx.model.get("frames") || [];
    const now = frames[ctx.current()];
    const run = now && now.run;
    const same = at.find((k) => frames[k].run === run);
    ctx.go(same === undefined ? at[0] : same);
  }

  function applyCheck(leaf, v, animate) {
    if (v === undefined) shownChecks.delete(leaf); else shownChecks.set(leaf, v);
    const e = checkEls.get(leaf);
    if (!e) return;
    const s = ctx.S();
    e.textContent = "";
    e.classList.remove("gv-ok", "gv-bad", "gv-acc", "gv-none");
    if (!v) return;
    if (v.grad === "None" || v.grad === undefined) {
      e.classList.add("gv-none");
      e.append(h("span", { text: fmt(s, "grad_none", { leaf }) }));
    } else {
      // after a backward() call on a .grad that already held something: what the call added is
      // what the chain rule stands for (the rest came from earlier calls, maybe another gradient=)
      e.append(h("span", { class: "gv-engine", text: v.added !== undefined
        ? fmt(s, "engine_added", { leaf, value: v.added, grad: v.now ?? v.grad }) : fmt(s, "engine_grad", { leaf, value: v.grad }) }));
      if (v.ok === true) {
        e.classList.add("gv-ok");
        e.append(h("span", { class: "gv-mark", "aria-hidden": "true", text: " ✓ " }), h("span", { text: s.agrees || "" }));
        if (v.total_times !== undefined) {        // what the .grad holds now: several calls added up
          e.append(h("span", { class: "gv-acc-note", text: `; ${leaf}.grad ${fmt(s, "accumulated", { k: v.total_times })}` }));
        }
      } else if (v.ok === false && v.times !== undefined) {   // accumulation, not an error
        e.classList.add("gv-acc");
        e.append(h("span", { class: "gv-mark", "aria-hidden": "true", text: " Σ " }),
                 h("span", { text: v.times === 0 ? s.zeroed || "" : fmt(s, "accumulated", { k: v.times }) }));
      } else if (v.ok === false) {
        e.classList.add("gv-bad");
        e.append(h("span", { class: "gv-mark", "aria-hidden": "true", text: " ✗ " }), h("span", { text: fmt(s, "differs", { diff: v.diff }) }));
      }
    }
    if (animate) fadeIn(e);
  }

  /** Scroll the panel (never the page) so that `target` is in view: its top at the panel's top
   *  (a chain of factors, read from its start) or its bottom at the bottom (a check, read after
   *  the lines above it). */
  function reveal(target, align) {
    if (!target || el.scrollHeight <= el.clientHeight + 1) return;
    const o = (el.offsetHeight ? el.getBoundingClientRect().height / el.offsetHeight : 1) || 1;
    const view = el.getBoundingClientRect(), r = target.getBoundingClientRect();
    if (r.top >= view.top && r.bottom <= view.bottom) return;
    const top = align === "top" || r.height > view.height;
    el.scrollTop += top ? (r.top - view.top) / o - 4 : (r.bottom - view.bottom) / o + 6;
  }

  /** Step k: light this frame's factors, show the product so far, keep the latest check in view.
   *  Once per animation frame, for the last step asked: scrubbing through a long graph lays out
   *  the MathML once, not once per step passed. */
  let pendingShow = null;
  function show(f, lastCheck, end) {
    if (!end) endLeaves = null;
    atEnd = !!end;
    const first = !pendingShow;
    pendingShow = [f, lastCheck];
    if (!first) return;
    const run = () => { const p = pendingShow; pendingShow = null; if (p) showNow(p[0], p[1]); };
    if (typeof requestAnimationFrame === "function") requestAnimationFrame(run); else run();
  }

  /** At an end of the animation the graph shows the leaves `names` (picture.endsShown): the
   *  panel shows the first of them it derives, its lines and check, the others' below it. */
  function showEnds(names) {
    if (!atEnd) return;
    endLeaves = names;
    revealed = null;             // (again: the layout may have changed since)
    if (!pendingShow && last) showNow(last[0], last[1]);
  }

  function showNow(f, lastCheck) {
    last = [f, lastCheck];
    for (const e of litFactors) e.classList.remove("gv-factor-now");
    litFactors = [];
    const chain = f.chain || {};
    for (const key of chain.factors || []) {
      const e = factorEls.get(Array.isArray(key) ? key.join(":") : String(key));
      if (e) { e.classList.add("gv-factor-now"); litFactors.push(e); }
    }
    const items = chain.so_far || [];
    if (soFar.hidden !== !items.length) soFar.hidden = !items.length;
    const key = items.length ? JSON.stringify(items) : "";
    if (key !== soFarKey) {           // MathML is costly to lay out: only when it changes
      soFarKey = key;
      soFar.textContent = "";
    }
    if (items.length && !soFar.firstChild) {
      soFar.append(h("span", { class: "gv-sofar-label", text: ctx.S().so_far || "" }));
      for (const it of items) {
        const m = mathEl(it, "gv-math gv-sofar-math");
        if (it.value !== undefined && !(it.mathml || it.latex || "").includes(it.value)) m.append(h("span", { class: "gv-sofar-val", text: ` = ${it.value}` }));
        soFar.append(m);
      }
    }
    for (const [name, sec] of leafEls) sec.classList.toggle("gv-active", `check:${name}` in (f.set || {}));
    // scroll only when what should be in view changed (reading positions costs a layout)
    // (at an end: the first leaf the graph shows whose check is filled in, from its first line)
    const ended = !litFactors.length && atEnd && endLeaves
      ? [...leafEls.keys()].find((name) => endLeaves.includes(name) && checkEls.get(name).textContent) : undefined;
    // (its lines from the top if they fit in the panel, else its check at the bottom)
    const whole = ended !== undefined && leafEls.get(ended).offsetHeight <= el.clientHeight - 12;
    const want = litFactors.length ? litFactors[0].closest(".gv-stages") || litFactors[0]
      : whole ? leafEls.get(ended) : checkEls.get(ended !== undefined ? ended : lastCheck);
    if (want === revealed) return;
    revealed = want;
    if (want) reveal(want, litFactors.length || whole ? "top" : "bottom");
  }

  return { el, soFar, build, indexFrames, applyCheck, show, showEnds };
}

/** The caption, the live buttons (backward(), retain_graph, forward again, zero_()) and the key help. */
function createTalk(ctx) {
  const { model } = ctx;
  const caption = h("div", { class: "gv-caption", role: "status", "aria-live": "polite", "aria-atomic": "true", "data-gv": "caption" });
  const backwardBtn = h("button", { type: "button", class: "gv-btn gv-live-btn", "data-gv": "backward" });
  const retain = h("input", { type: "checkbox", "data-gv": "retain" });
  const retainLabel = h("label", { class: "gv-retain" }, retain, h("code", {}, ""));
  const again = h("input", { type: "checkbox", "data-gv": "forward-again" });
  const againLabel = h("label", { class: "gv-retain" }, again, h("span", {}, ""));
  const zeroBtn = h("button", { type: "button", class: "gv-btn gv-live-btn", "data-gv": "zero" });
  const keys = h("span", { class: "gv-keys" });
  const live = h("div", { class: "gv-live", "data-gv": "live" }, backwardBtn, retainLabel, againLabel, zeroBtn);
  const capWrap = h("div", { class: "gv-capwrap" }, caption);
  const foot = h("div", { class: "gv-foot" }, live, keys);
  let busy = false, busyTimer = null;

  function labels() {
    const s = ctx.S();
    caption.setAttribute("aria-label", s.caption_label || "");
    backwardBtn.textContent = s.backward_btn || "backward()";
    backwardBtn.title = fmt(s, "backward_title", { root: model.get("root_name") });
    retainLabel.querySelector("code").textContent = s.retain_graph || "retain_graph=True";
    againLabel.querySelector("span").textContent = s.forward_again || "forward again if freed";
    againLabel.title = s.forward_again_title || "";
    zeroBtn.textContent = s.zero_btn || "zero_()";
    zeroBtn.title = s.zero_title || "";
    keys.textContent = s.keys_help || "";
  }

  function flags() {
    live.hidden = !model.get("live");
    retain.checked = !!model.get("retain_graph");
    again.checked = model.get("forward_again") !== false;
  }

  /** The words of frame f; the engine's error is the caption itself, marked (and read out at once). */
  /** A caption longer than its box scrolls, and says so (a fade and an arrow at its foot). */
  function markOverflow() {
    const more = caption.scrollHeight > caption.clientHeight + 1 &&
      caption.scrollTop + caption.clientHeight < caption.scrollHeight - 1;
    capWrap.classList.toggle("gv-more-below", more);
  }
  caption.addEventListener("scroll", markOverflow, { passive: true });

  function show(f, stepwise) {
    caption.textContent = f ? renderMsg(ctx.S(), f.msg) : "";
    caption.scrollTop = 0;
    if (typeof requestAnimationFrame === "function") requestAnimationFrame(markOverflow); else markOverflow();
    if (!f) return "";
    if (stepwise) fadeIn(caption);
    caption.classList.toggle("gv-caption-error", !!f.error);
    // a press the widget could not run (the graph cannot be run again, nor built again): said in words
    caption.toggleAttribute("data-gv-unchecked", !!f.unchecked);
    caption.setAttribute("aria-live", f.error ? "assertive" : "polite");
    caption.dataset.phase = f.phase;
    return caption.textContent;
  }

  function ready() {               // new frames arrived: the kernel answered
    busy = false;
    clearTimeout(busyTimer);
    backwardBtn.disabled = zeroBtn.disabled = false;
  }

  function ask(msg) {             // one command at a time; the answer is new frames
    if (busy) return;
    busy = true;
    backwardBtn.disabled = zeroBtn.disabled = true;
    ctx.stop();
    model.send(msg);
    clearTimeout(busyTimer);      // no answer (kernel busy or gone): let the student try again
    busyTimer = setTimeout(ready, 15000);
  }
  // (both toggles as they are now: their own updates may still wait behind the last frame's sync,
  // which ipywidgets sends one at a time, while a message like this one goes at once)
  backwardBtn.addEventListener("click", () => ask({ type: "backward", retain_graph: retain.checked,
                                                    forward_again: again.checked }));
  zeroBtn.addEventListener("click", () => ask({ type: "zero" }));
  retain.addEventListener("change", () => { model.set("retain_graph", retain.checked); model.save_changes(); });
  again.addEventListener("change", () => { model.set("forward_again", again.checked); model.save_changes(); });

  return { capWrap, foot, labels, flags, show, ready, dispose: () => clearTimeout(busyTimer) };
}

/** Which step is shown: draws step k from the frames' slots, plays, steps, jumps, listens to keys. */
function createPlayer(ctx, { controls, picture, panel, talk }) {
  const { model, root } = ctx;
  let frames = [], slots = new Map(), shown = new Map(), checkSlots = [];
  let current = -1, timer = null, seeds = [], forwardStart = 0;
  const n = () => frames.length;
  /** Whether step k is an end of the animation: its first frame, a backward pass done, its last. */
  const atEnds = (k) => k <= 0 || k >= n() - 1 || ["start", "done"].includes(frames[k] && frames[k].kind);

  function load() {
    frames = model.get("frames") || [];
    slots = indexSlots(frames);
    shown = new Map();
    checkSlots = [...slots.keys()].filter((k) => k.startsWith("check:"));
    seeds = [];
    frames.forEach((f, k) => { if (f.kind === "seed") seeds.push(k); });
    const fw = frames.findIndex((f) => f.phase === "forward");
    forwardStart = fw < 0 ? 0 : fw;
    controls.setFrames(frames);
    panel.indexFrames(frames);
  }

  /** The picture was drawn anew: every slot has to be applied again. */
  function forget() {
    shown = new Map();
    current = -1;
  }

  function applySlot(slot, v, animate) {
    const colon = slot.indexOf(":");
    const kind = slot.slice(0, colon), id = slot.slice(colon + 1);
    if (kind === "check") return panel.applyCheck(id, v || undefined, animate);
    if (kind === "cls") {
      const g = picture.slots.node(id);
      if (!g) return;
      const was = g.getAttribute("data-gv-state");
      if (v) g.setAttribute("data-gv-state", v); else g.removeAttribute("data-gv-state");
      if (animate && was === "pending" && v !== "pending") fadeIn(g);
      return;
    }
    const key = kind === "val" ? `${id}-val` : kind === "grad" ? `${id}-grad` : kind === "edge" ? `${id}-grad`
      : kind === "name" ? `${id}-name` : null;
    if (!key) return;
    const holder = picture.slots.set(key, v);
    if (holder && kind === "name") holder.classList.add("gv-autoname");
    // an edge showing the gradient it carried points the way that gradient went (to the input),
    // also once the pass is done (the PyTorch view's edges already point that way)
    const edge = kind === "edge" && !picture.slots.pytorch() ? picture.slots.edge(id) : null;
    if (edge) {
      if (v) reverseHead(edge);
      edge.classList.toggle("gv-carried", !!v);
    }
    if (holder && animate && v) fadeIn(holder);
  }

  /** The leaf whose check compared a .grad last at or before step k (its ✓ is kept in view). */
  function lastCheckAt(k) {
    let best = -1, leaf = null;
    for (const slot of checkSlots) {
      const e = slots.get(slot);
      for (let i = e.at.length - 1; i >= 0; i--) {
        if (e.at[i] > k) continue;
        const v = e.val[i];           // a check that compared something (not "x.grad is None")
        if (v && typeof v.ok === "boolean" && e.at[i] > best) { best = e.at[i]; leaf = slot.slice(6); }
        break;
      }
    }
    return leaf;
  }

  function draw(k, { animate = false } = {}) {
    if (!n()) { talk.show(null); return; }
    k = Math.max(0, Math.min(n() - 1, k | 0));
    const asked = ctx.gate ? ctx.gate(current, k) : k;     // practice mode: not past an open question
    if (asked !== k) {
      k = asked;
      if (model.get("playing")) setPlaying(false);
      if (k === current) return;
    }
    const stepwise = animate && current >= 0 && k === current + 1;
    for (const [slot, e] of slots) {
      const v = valueAt(e, k);
      const old = shown.get(slot);
      const same = typeof v === "object" && v !== null ? JSON.stringify(v) === JSON.stringify(old) : v === old;
      if (same && shown.has(slot)) continue;
      shown.set(slot, v);
      applySlot(slot, v === undefined ? "" : v, stepwise);
    }
    const f = frames[k];
    picture.light(f);
    if (root.dataset.phase !== f.phase) root.dataset.phase = f.phase;
    controls.show(f, k, n(), talk.show(f, stepwise));
    panel.show(f, lastCheckAt(k), atEnds(k));
    current = k;
    picture.follow(f, stepwise, atEnds(k));
    if (ctx.practiced) ctx.practiced(k, n() - 1);
  }

  function go(k, opts = {}) {
    k = Math.max(0, Math.min(n() - 1, k | 0));
    if (ctx.gate) {
      const asked = ctx.gate(current, k, opts.auto);     // (a tick of play never reveals: a key does)
      if (asked < k && model.get("playing")) setPlaying(false);   // a question waits: nothing plays (▶, not ⏸)
      k = asked;
    }
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
    controls.showPlaying(on);
    if (!on) return;
    const delay = 1000 / Math.max(0.1, model.get("speed") || 1);
    timer = setTimeout(() => {
      if (current >= n() - 1) return setPlaying(false);
      go(current + 1, { animate: true, auto: true });
      if (current >= n() - 1) setPlaying(false);
      else schedule();
    }, delay);
  }

  function togglePlay() {
    if (!model.get("playing") && current >= n() - 1) go(0);
    // practice mode: a question waiting before the next step is answered first (gate puts the
    // cursor in its answer; in lecture mode this press is the key that reveals, and play goes on)
    if (!model.get("playing") && ctx.gate && current < n() - 1 && ctx.gate(current, current + 1) === current) return;
    setPlaying(!model.get("playing"));
  }

  function jumpBackward() {
    if (!seeds.length) return;
    const next = seeds.find((s) => s > current);
    go(next === undefined ? seeds[0] : next);
  }

  const stopAnd = (fn) => () => { setPlaying(false); fn(); };
  const b = controls.b;
  b.toForward.addEventListener("click", stopAnd(() => go(forwardStart)));
  b.back.addEventListener("click", stopAnd(() => go(current - 1)));
  b.step.addEventListener("click", stopAnd(() => go(current + 1, { animate: true })));
  b.play.addEventListener("click", togglePlay);
  b.toBackward.addEventListener("click", stopAnd(jumpBackward));
  controls.scrub.addEventListener("input", stopAnd(() => go(+controls.scrub.value)));
  controls.speed.addEventListener("change", () => { model.set("speed", +controls.speed.value); model.save_changes(); schedule(); });
  root.addEventListener("keydown", (ev) => {
    const tag = (ev.target && ev.target.tagName || "").toLowerCase();
    if (ev.target !== root && ["input", "select", "button", "textarea", "summary"].includes(tag)) return;
    const act = {
      " ": togglePlay, Spacebar: togglePlay,
      ArrowRight: stopAnd(() => go(current + 1, { animate: true })),
      ArrowLeft: stopAnd(() => go(current - 1)),
      Home: stopAnd(() => go(0)),
      End: stopAnd(() => go(n() - 1)),
    }[ev.key];
    if (act) { ev.preventDefault(); ev.stopPropagation(); act(); }
  });

  return {
    load, forget, draw, schedule,
    count: n,
    /** One step forward (animated, as the step button) or back; playing stops. */
    step: (d) => { setPlaying(false); go(current + d, { animate: d > 0 }); },
    current: () => current,
    frame: () => frames[current],
    atEnds: () => atEnds(current),
    jump: (k) => { setPlaying(false); go(k); },
    stop: () => setPlaying(false),
    redraw: (fresh) => { if (fresh) shown.clear(); draw(current < 0 ? model.get("frame") : current); },
    dispose: () => clearTimeout(timer),
  };
}

/** Side by side (graph | caption and derivation) or stacked (graph above them) for a picture of
 *  natural size `nat` in a box W × H: whichever shows the graph larger; `zoom` is the whole graph's
 *  zoom there (a graph narrower than its column leaves the rest to the derivation), `box` the
 *  graph's box in each layout ([w, h], CSS px). */
function layoutFor(nat, W, H, r) {
  const zoomIn = (w, h) => Math.max(r, Math.min(w / nat.w, h / nat.h, r * 1.7));   // the picture's default
  let sideW = Math.min(520, Math.max(300, W * 0.36));
  const sideZoom = Math.min((W - sideW - 10) / nat.w, H / nat.h);
  // stacked, the graph takes what it needs, leaving the caption and derivation 190 px (or 38%)
  const most = Math.max(H * 0.62, H - 190);
  const stackH = Math.min(most, Math.max(H * 0.4, nat.h * zoomIn(W, most) + 12));
  const stackZoom = Math.min(W / nat.w, stackH / nat.h);
  const layout = W < 560 || stackZoom > sideZoom * 1.15 ? "stack" : "side";   // a wide graph stacks
  const wants = nat.w * zoomIn(W - sideW - 10, H) + 16;
  const box = { side: [W - sideW - 10, H], stack: [W, stackH] };
  if (layout === "side" && wants < W - sideW - 10) sideW = Math.min(W * 0.58, W - wants - 10);
  return { layout, sideW, stackH, box, zooms: { side: sideZoom, stack: stackZoom },
           zoom: layout === "stack" ? stackZoom : sideZoom };
}

/** For a graph not readable whole in the layout `l` chose (its text under 11 px, zoom r): the
 *  other layout if it shows the graph whole and readable, else the one whose graph box shows the
 *  output with more leaves at a readable size (the ends of the animation show them: frameEnds). */
function readableLayout(l, picture, r) {
  if (l.zoom >= r * 0.995 || !l.box) return l;
  const other = l.layout === "side" ? "stack" : "side";
  if (other === "side" && l.box.stack[0] < 560) return l;    // (a narrow widget stacks)
  const pick = (layout) => ({ ...l, layout, zoom: l.zooms[layout] });
  if (l.zooms[other] >= r * 0.995) return pick(other);
  const NOTE = 24;      // (the line under the box saying what it shows)
  const seen = (layout) => picture.endsShownIn(l.box[layout][0] - 2, l.box[layout][1] - NOTE, r);
  const a = seen(l.layout), b = seen(other);
  return a && b && b[0] > a[0] ? pick(other) : l;
}

/** The layout, and the drawing shown, for the box the widget has now: of the directions the traits
 *  hold (top to bottom, and left to right where that could win: svg_lr), the one whose whole graph
 *  is larger here (a tie: the first, top to bottom), then side by side or stacked for it.  Returns
 *  whether the picture changed (every slot must then be drawn again). */
function chooseLayout(main, picture) {
  const W = main.clientWidth, H = main.clientHeight;
  const options = picture.candidates();
  if (!W || !H || options.length < 2 || !options[0][1]) {
    // (not rendered yet, or one drawing: the default; its layout below once it is measured)
    const changed = picture.use(picture.direction() || options[0][0]);
    const nat = picture.natural();
    if (W && H && nat && nat.w) {
      const r = picture.readableZoom();
      applyLayout(main, readableLayout(layoutFor(nat, W, H, r), picture, r));
    }
    return changed;
  }
  const r = picture.readableZoom();
  let best = null;
  const fits = [];
  // (zoomed or fitted by hand: the direction stays, with the place the student is looking at)
  const kept = picture.userZoomed() && picture.direction();
  for (const [dir, nat] of options) {
    const l = layoutFor(nat, W, H, r);
    fits.push(`${dir} ${l.zoom.toFixed(4)}`);
    if (kept ? dir === kept : !best || l.zoom > best.zoom * 1.01) best = { ...l, dir };
  }
  main.dataset.fits = fits.join(", ");      // (each direction's whole-graph zoom here: what was compared)
  const changed = picture.use(best.dir);
  applyLayout(main, readableLayout(best, picture, r));
  return changed;
}

function applyLayout(main, l) {
  main.dataset.layout = l.layout;
  main.style.setProperty("--gv-side-w", `${Math.round(l.sideW)}px`);
  main.style.setProperty("--gv-graph-h", `${Math.round(l.stackH)}px`);
}

// --- render: the parts wired together --------------------------------------------------------------

function render({ model, el }) {
  const uid = `gvw${++uidCounter}${Math.random().toString(36).slice(2, 7)}`;
  const root = h("div", { class: "gv-widget", tabindex: "0", role: "group" });
  el.append(root);
  const ctx = { model, uid, root, S: () => model.get("strings") || {} };
  let drawn = false;                   // (the frames are loaded: another drawing is drawn at once)

  const controls = createControls(ctx);
  const picture = createPicture(ctx);
  const panel = createDerivationPanel(ctx);
  const talk = createTalk(ctx);
  const player = createPlayer(ctx, { controls, picture, panel, talk });
  // what the parts ask of each other
  ctx.current = player.current;
  ctx.go = player.jump;
  ctx.stop = player.stop;
  ctx.endsShown = (names) => panel.showEnds(names);
  ctx.refollow = () => { const f = player.frame(); if (f) picture.follow(f, false, player.atEnds()); };

  // practice.js (left out of a saved page that asks nothing): the question before a step
  const practice = typeof createPractice === "function" ? createPractice(ctx) : null;
  if (practice) { ctx.gate = practice.gate; ctx.practiced = practice.shown; }
  const side = h("div", { class: "gv-side" }, h("div", { class: "gv-talk" }, talk.capWrap, practice && practice.el, panel.soFar, talk.foot), panel.el);
  const main = h("div", { class: "gv-main", "data-layout": "side" }, picture.el, side);
  controls.el.append(picture.tools);     // zoom, fit, fullscreen, key: in the bar, off the picture
  root.append(controls.el, main);

  function labels() {
    root.setAttribute("aria-label", fmt(ctx.S(), "widget_label", { root: model.get("root_name") }));
    root.lang = model.get("lang") || "en";
    controls.labels();
    controls.showPlaying(!!model.get("playing"));
    picture.labels();
    talk.labels();
  }

  function flags() {
    root.classList.toggle("gv-presenter", !!model.get("presenter"));
    talk.flags();
    controls.setSpeed(model.get("speed") || 1);
  }

  function showFatal() {
    const err = model.get("error");
    picture.showFatal(err ? fmt(ctx.S(), "cannot_render", { reason: err }) : "");
  }

  function relayout() {
    if (chooseLayout(main, picture)) redrawPicture();
    picture.relayout();
    ctx.refollow();
  }

  /** Another drawing went into the box: every slot and light of the step shown, on it. */
  function redrawPicture() {
    player.forget();
    if (drawn) player.draw(model.get("frame"));
  }

  function loadSvg() {
    const asked = model.get("rankdir") || "auto";
    picture.setDrawings({ [asked === "auto" ? "TB" : asked]: model.get("svg"), LR: asked === "auto" ? model.get("svg_lr") || "" : "" });
    chooseLayout(main, picture);
    player.forget();
    picture.relayout();
  }

  // --- model changes ---
  const handlers = {
    "change:svg": () => { loadSvg(); player.draw(model.get("frame")); },
    "change:svg_lr": () => { loadSvg(); player.draw(model.get("frame")); },
    "change:rankdir": () => { loadSvg(); player.draw(model.get("frame")); },
    "change:frames": () => { player.load(); talk.ready(); player.draw(model.get("frame")); },
    "change:frame": () => { const k = model.get("frame"); if (k !== player.current()) player.draw(k, { animate: k === player.current() + 1 }); },
    "change:playing": () => player.schedule(),
    "change:speed": () => { flags(); player.schedule(); },
    "change:derivation": () => { panel.build(); player.redraw(); },
    "change:lang": () => { labels(); panel.build(); player.redraw(); },
    "change:strings": () => { labels(); panel.build(); player.redraw(true); },
    "change:presenter": () => { flags(); relayout(); },
    "change:retain_graph": () => flags(),
    "change:forward_again": () => flags(),
    "change:live": () => flags(),
    "change:error": () => showFatal(),
    "change:root_name": () => labels(),
  };
  for (const [ev, fn] of Object.entries(handlers)) model.on(ev, fn);
  const scheme = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;
  const onScheme = () => followScheme(root, picture.index().svg);
  if (scheme && scheme.addEventListener) scheme.addEventListener("change", onScheme);
  // the box changes size with the window, the notebook's width, fullscreen and the slide deck
  let pending = false;
  const resized = typeof ResizeObserver === "function" ? new ResizeObserver(() => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; relayout(); });
  }) : null;
  if (resized) resized.observe(root);

  try {
    labels();
    flags();
    showFatal();
    loadSvg();
    player.load();
    panel.build();
    player.draw(model.get("frame") || 0);
    drawn = true;
    player.schedule();
  } catch (err) {
    picture.showFatal(fmt(ctx.S(), "cannot_render", { reason: String(err && err.message || err) }));
  }
  root.dataset.gvReady = "1";
  // for a slide deck's clicker (deck.js): step the animation, and say when it is at an end
  root.gvControl = {
    atEnd: () => player.current() >= player.count() - 1,
    atStart: () => player.current() <= 0,
    // (a question open on this step: the room predicted; the clicker reveals it, practice.js)
    step: (d) => { if (!(practice && d > 0 && practice.reveal())) player.step(d); },
    wholeGraph: () => picture.wholeShown(),
    rankdir: () => picture.direction(),
  };

  return () => {
    player.dispose();
    talk.dispose();
    if (practice) practice.dispose();
    for (const [ev, fn] of Object.entries(handlers)) model.off(ev, fn);
    if (scheme && scheme.removeEventListener) scheme.removeEventListener("change", onScheme);
    if (resized) resized.disconnect();
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
