// gradviz slides: start reveal.js; give each widget a shadow root of its own and shrink it when it
// is taller than what its slide has left below it.
//
// Why a shadow root: reveal.js takes every <section> under a slide for a vertical slide, and the
// widget draws <section>s of its own (its derivation); the notebook's and reveal's CSS stay out too.
// The widgets boot from the module script that follows this one, in the roots listed here.
(function () {
  "use strict";
  var HEIGHT = 800;
  var deck = new Reveal(document.querySelector(".reveal"), {
    width: 1280, height: HEIGHT, margin: 0.04,
    hash: true, controls: true, progress: true, slideNumber: "c/t",
    center: false, transition: "slide",
  });
  window.gradvizDeck = deck;   // for the browser tests and the console

  // A widget's picture and derivation first get what the slide has left below the controls and
  // the caption (--gv-graph-max): a tall graph then scrolls inside its own box, which follows the
  // step being shown, and stays large enough to read from the back of the room. What still does
  // not fit is scaled (transform) to fit: its box is given the scaled height so that nothing below
  // it moves. Below MIN_SCALE it would be unreadable: it stays at MIN_SCALE and its box scrolls.
  // Only the slide on screen can be measured.
  var MIN_SCALE = 0.5, MIN_GRAPH = 240;
  function fit(box) {
    var host = box.shadowRoot && box.shadowRoot.querySelector(".gv-host");
    var slide = box.closest("section");
    if (!host || !slide || !slide.classList.contains("present") || !host.offsetHeight) return;
    var top = (box.getBoundingClientRect().top - slide.getBoundingClientRect().top) / deck.getScale();
    var room = HEIGHT - top - 16;
    var main = host.querySelector(".gv-main");
    if (main) {
      host.style.transform = "";
      host.style.width = "100%";
      host.style.removeProperty("--gv-graph-max");
      var rest = host.offsetHeight - main.offsetHeight;
      host.style.setProperty("--gv-graph-max", Math.max(MIN_GRAPH, room - rest) + "px");
    }
    var scale = 1;
    host.style.boxSizing = "border-box";
    host.style.transformOrigin = "0 0";
    for (var i = 0; i < 3; i++) {       // a smaller scale makes the host wider: it may reflow
      host.style.width = 100 / scale + "%";
      scale = Math.max(MIN_SCALE, Math.min(1, room / host.offsetHeight));
    }
    host.style.width = 100 / scale + "%";
    host.style.transform = scale < 1 ? "scale(" + scale + ")" : "";
    var height = host.offsetHeight * scale;
    box.style.height = Math.min(height, room) + "px";
    box.style.overflowY = height > room + 1 ? "auto" : "hidden";
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
