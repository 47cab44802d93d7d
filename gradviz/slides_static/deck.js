// gradviz slides: start reveal.js; give each widget a shadow root of its own, the room it needs
// (a slide of its own when what comes before it leaves too little), and the clicker's keys.
//
// Why a shadow root: reveal.js takes every <section> under a slide for a vertical slide, and the
// widget draws <section>s of its own (its derivation); the notebook's and reveal's CSS stay out too.
// The widgets boot from the module script that follows this one, in the roots listed here.
(function () {
  "use strict";
  var WIDTH = 1280, HEIGHT = 720;   // 16:9, as projectors and laptops are
  var deck = new Reveal(document.querySelector(".reveal"), {
    width: WIDTH, height: HEIGHT, margin: 0.04,
    // → and ← (and Space) walk every slide, sub-slides included: a lecturer pressing → alone
    // reaches the widget's slide, which nbconvert makes a vertical sub-slide
    navigationMode: "linear",
    hash: true, controls: true, progress: true, slideNumber: "c/t",
    center: false, transition: "slide",
  });
  window.gradvizDeck = deck;   // for the browser tests and the console

  // --- room ---------------------------------------------------------------------------------------
  // A widget gets the height its slide has left below what comes before it (--gv-height): it lays
  // out its graph, caption and derivation inside that box (choosing side by side or stacked, and a
  // zoom that shows the whole graph with its text at 11 px or more), so the whole widget, the
  // derivation's ✓ included, is on the slide without scrolling. When that room is too small for
  // the graph to be read whole (or for the widget at all), the widget goes on a slide of its own
  // right after, under the slide's title: never squeezed, never scaled down.
  var MIN_ROOM = 420;          // below this a widget is not usable on a slide
  var CHROME = 60;             // the widget's bar, padding and borders around its graph box
  var TALK = 190;              // stacked, the caption and derivation keep this much below the graph
  var SIDE = 0.36;             // the caption/derivation column beside the graph (widget.js)

  function roomBelow(box) {
    var slide = box.closest("section");
    var forced = [];
    for (var s = slide; s && s.tagName === "SECTION"; s = s.parentElement.closest("section")) {
      forced.push([s, s.style.cssText]);
      s.style.setProperty("display", "block", "important");
    }
    var top = (box.getBoundingClientRect().top - slide.getBoundingClientRect().top) / (deck.getScale() || 1);
    forced.forEach(function (f) { f[0].style.cssText = f[1]; });
    return Math.floor(HEIGHT - top - 12);
  }

  /** Whether the widget's graph can be shown whole, its smallest text at 11 px, in `room` px (in
   *  one of its drawings: top to bottom, or left to right when the widget holds that one too). */
  function graphFits(host, room) {
    var state;
    try { state = JSON.parse((host.querySelector("script.gv-state") || {}).textContent || "{}"); } catch (e) { return true; }
    var svg = state.svg || (host.querySelector(".gv-static svg, svg.gv-svg") || { outerHTML: "" }).outerHTML;
    return drawingFits(svg, room) || (!!state.svg_lr && drawingFits(state.svg_lr, room));
  }

  function drawingFits(svg, room) {
    var vb = /viewBox="\s*[-\d.]+[\s,]+[-\d.]+[\s,]+([\d.]+)[\s,]+([\d.]+)/.exec(svg || "");
    if (!vb) return true;
    var fonts = (svg.match(/font-size="([\d.]+)"/g) || []).map(function (m) { return parseFloat(m.slice(11)); });
    var z = 11.2 / (fonts.length ? Math.min.apply(null, fonts) : 14);
    var w = +vb[1] * z, h = +vb[2] * z, inner = WIDTH - 60, graphH = room - CHROME;
    return (w <= inner * (1 - SIDE) - 10 && h <= graphH) ||
      (w <= inner && h + 12 <= Math.max(graphH * 0.62, graphH - TALK));
  }

  /** Move the widget (with its cell's code when that is one line) to a new slide right after its
   *  own, under a small copy of the slide's title. */
  function ownSlide(box) {
    var slide = box.closest("section");
    var cell = box.closest(".jp-Cell");
    var output = box.closest(".jp-Cell-outputWrapper") || box.closest(".jp-OutputArea") || box;
    var next = document.createElement("section");
    next.className = "gv-own-slide";
    var title = slide.querySelector("h1, h2, h3");
    if (title) {
      var t = document.createElement(title.tagName);
      t.className = "gv-own-title";
      t.textContent = title.textContent.replace(/¶\s*$/, "").trim();
      next.appendChild(t);
    }
    var holder = document.createElement("div");
    holder.className = cell ? cell.className : "jp-Cell";
    var input = cell && cell.querySelector(".jp-Cell-inputWrapper");
    var code = input && input.querySelector("pre");
    var lines = code ? code.textContent.replace(/\s+$/, "").split("\n").length : 99;
    if (input && lines <= 1) holder.appendChild(input);       // `gradviz.animate(o)` goes along
    holder.appendChild(output);
    next.appendChild(holder);
    if (cell && !cell.querySelector(".jp-Cell-inputWrapper, .jp-OutputArea-output")) cell.remove();
    // (a second widget of the same slide goes after the first one's slide: the notebook's order)
    var after = slide.gvLastOwn || slide;
    after.parentNode.insertBefore(next, after.nextSibling);
    slide.gvLastOwn = next;
  }

  function fit(box) {
    var host = box.shadowRoot && box.shadowRoot.querySelector(".gv-host");
    var slide = box.closest("section");
    if (!host || !slide || !slide.classList.contains("present")) return;
    var top = (box.getBoundingClientRect().top - slide.getBoundingClientRect().top) / deck.getScale();
    var room = Math.max(MIN_ROOM, Math.floor(HEIGHT - top - 12));
    host.style.setProperty("--gv-height", room + "px");
    host.style.boxSizing = "border-box";
    box.style.height = Math.min(host.offsetHeight, room) + "px";
    box.style.overflowY = "hidden";
    box.dataset.room = String(room);
  }
  function fitPresent() {
    document.querySelectorAll(".reveal .slides section.present .gv-fit").forEach(fit);
  }

  var css = document.getElementById("gv-widget-css");
  var roots = [], boxes = [];
  document.querySelectorAll(".reveal .gv-host").forEach(function (host) {
    var box = document.createElement("div");
    box.className = "gv-fit";
    host.parentNode.insertBefore(box, host);
    var shadow = box.attachShadow({ mode: "open" });
    if (css) shadow.appendChild(css.content.cloneNode(true));
    shadow.appendChild(host);
    roots.push(shadow);
    boxes.push(box);
    var pending = false;
    new ResizeObserver(function () {   // captions change length as the widget plays
      if (pending) return;
      pending = true;
      requestAnimationFrame(function () { pending = false; fit(box); });
    }).observe(host);
  });
  window.gradvizWidgetRoots = roots;

  deck.on("ready", function () {
    var moved = false;
    boxes.forEach(function (box) {
      var host = box.shadowRoot && box.shadowRoot.querySelector(".gv-host");
      var room = roomBelow(box);
      var own = HEIGHT - 12 - 48 - 44;   // a slide of its own: a small title, maybe a line of code
      if (room < MIN_ROOM || (room < own - 40 && !graphFits(host, room) && graphFits(host, own))) {
        ownSlide(box);
        moved = true;
      }
    });
    if (moved) deck.sync();
    fitPresent();
  });
  deck.on("slidechanged", fitPresent);
  deck.on("fragmentshown", fitPresent);
  deck.on("resize", fitPresent);

  // --- the clicker ----------------------------------------------------------------------------------
  // → / PageDown / Space step the widget on the slide shown until its animation is at its end, then
  // move the deck (as reveal's fragments do); ← / PageUp step it back to its start, then the deck.
  // A widget in a fragment not shown yet is not stepped: → shows the fragment first.
  // No click on the picture is needed. Keys typed into a control (the speed menu...) are its own.
  var FORWARD = { ArrowRight: 1, PageDown: 1, " ": 1, Spacebar: 1 };
  var BACK = { ArrowLeft: 1, PageUp: 1 };
  function widgetsShown() {
    var out = [];
    document.querySelectorAll(".reveal .slides section.present .gv-fit").forEach(function (box) {
      var slide = box.closest("section");
      if (!slide.classList.contains("present")) return;
      if (box.closest(".fragment:not(.visible)")) return;    // not shown yet: → first reveals it
      var w = box.shadowRoot && box.shadowRoot.querySelector(".gv-widget");
      if (w && w.gvControl) out.push(w.gvControl);
    });
    return out;
  }
  document.addEventListener("keydown", function (ev) {
    if (ev.altKey || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.defaultPrevented) return;
    var d = FORWARD[ev.key] ? 1 : BACK[ev.key] ? -1 : 0;
    if (!d) return;
    var target = ev.composedPath ? ev.composedPath()[0] : ev.target;
    var tag = (target && target.tagName || "").toLowerCase();
    if (["input", "select", "textarea"].indexOf(tag) >= 0 || (target && target.isContentEditable)) return;
    if (tag === "button" && ev.key === " ") return;                // Space presses a focused button
    var shown = widgetsShown();
    var todo = d > 0 ? shown.filter(function (c) { return !c.atEnd(); })
                     : shown.filter(function (c) { return !c.atStart(); }).reverse();
    ev.preventDefault();
    ev.stopImmediatePropagation();
    if (todo.length) todo[0].step(d);
    else if (d > 0) deck.next();
    else deck.prev();
  }, true);

  deck.initialize();
})();
