// gradviz slides: start reveal.js; give each widget a shadow root of its own and shrink it when it
// is taller than what its slide has left below it.
//
// Why a shadow root: reveal.js takes every <section> under a slide for a vertical slide, and the
// widget draws <section>s of its own (its derivation); the notebook's and reveal's CSS stay out too.
// The widgets boot from the module script that follows this one, in the roots listed here.
(function () {
  "use strict";
  var HEIGHT = 720;            // 16:9, as projectors and laptops are
  var deck = new Reveal(document.querySelector(".reveal"), {
    width: 1280, height: HEIGHT, margin: 0.04,
    // → and ← (and Space) walk every slide, sub-slides included: a lecturer pressing → alone
    // reaches the widget's slide, which nbconvert makes a vertical sub-slide
    navigationMode: "linear",
    hash: true, controls: true, progress: true, slideNumber: "c/t",
    center: false, transition: "slide",
  });
  window.gradvizDeck = deck;   // for the browser tests and the console

  // A widget gets the height its slide has left below what comes before it (--gv-height): it lays
  // out its graph, caption and derivation inside that box (zooming and panning the graph), so the
  // whole widget, the derivation's ✓ included, is on the slide without scrolling. Only when that
  // room is too small to be useful is the widget scaled down (transform) to fit.
  // Only the slide on screen can be measured.
  var MIN_ROOM = 360;
  function fit(box) {
    var host = box.shadowRoot && box.shadowRoot.querySelector(".gv-host");
    var slide = box.closest("section");
    if (!host || !slide || !slide.classList.contains("present")) return;
    var top = (box.getBoundingClientRect().top - slide.getBoundingClientRect().top) / deck.getScale();
    var room = Math.floor(HEIGHT - top - 12);
    var scale = room >= MIN_ROOM ? 1 : Math.max(0.5, room / MIN_ROOM);
    host.style.setProperty("--gv-height", Math.round(room / scale) + "px");
    host.style.boxSizing = "border-box";
    host.style.transformOrigin = "0 0";
    host.style.width = 100 / scale + "%";
    host.style.transform = scale < 1 ? "scale(" + scale + ")" : "";
    box.style.height = Math.min(host.offsetHeight * scale, room) + "px";
    box.style.overflowY = "hidden";
    box.dataset.scale = scale.toFixed(3);
  }
  function fitPresent() {
    document.querySelectorAll(".reveal .slides section.present .gv-fit").forEach(fit);
  }

  var css = document.getElementById("gv-widget-css");
  var roots = [];
  document.querySelectorAll(".reveal .gv-host").forEach(function (host) {
    var box = document.createElement("div");
    box.className = "gv-fit";
    host.parentNode.insertBefore(box, host);
    var shadow = box.attachShadow({ mode: "open" });
    if (css) shadow.appendChild(css.content.cloneNode(true));
    shadow.appendChild(host);
    roots.push(shadow);
    var pending = false;
    new ResizeObserver(function () {   // captions change length as the widget plays
      if (pending) return;
      pending = true;
      requestAnimationFrame(function () { pending = false; fit(box); });
    }).observe(host);
  });
  window.gradvizWidgetRoots = roots;

  deck.on("ready", fitPresent);
  deck.on("slidechanged", fitPresent);
  deck.on("fragmentshown", fitPresent);
  deck.on("resize", fitPresent);
  deck.initialize();
})();
