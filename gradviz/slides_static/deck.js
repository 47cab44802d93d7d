// gradviz slides: start reveal.js, and shrink each widget that is taller than what its slide has
// left below it. (The widgets boot themselves: their module script follows this one.)
(function () {
  "use strict";
  var HEIGHT = 800;
  var deck = new Reveal(document.querySelector(".reveal"), {
    width: 1280, height: HEIGHT, margin: 0.04,
    hash: true, controls: true, progress: true, slideNumber: "c/t",
    center: false, transition: "slide",
  });
  window.gradvizDeck = deck;   // for the browser tests and the console

  // A widget is laid out at full size, then scaled (transform) to fit: its box is given the
  // scaled height so that nothing below it moves. Only slides on screen can be measured.
  function fit(host) {
    var box = host.parentElement, section = host.closest("section");
    if (!section || !section.classList.contains("present") || !host.offsetHeight) return;
    var top = box.getBoundingClientRect().top - section.getBoundingClientRect().top;
    var room = HEIGHT - top / deck.getScale() - 16;
    var scale = 1;
    for (var i = 0; i < 3; i++) {       // a narrower scale makes the host wider: it may reflow
      host.style.width = 100 / scale + "%";
      scale = Math.max(0.45, Math.min(1, room / host.offsetHeight));
    }
    host.style.width = 100 / scale + "%";
    host.style.transform = scale < 1 ? "scale(" + scale + ")" : "";
    box.style.height = host.offsetHeight * scale + "px";
    box.dataset.scale = scale.toFixed(3);
  }
  function fitAll() {
    document.querySelectorAll(".reveal .slides section.present .gv-host").forEach(fit);
  }

  document.querySelectorAll(".reveal .gv-host").forEach(function (host) {
    var box = document.createElement("div");
    box.className = "gv-fit";
    host.parentNode.insertBefore(box, host);
    box.appendChild(host);
    var pending = false;
    new ResizeObserver(function () {   // captions change length as the widget plays
      if (pending) return;
      pending = true;
      requestAnimationFrame(function () { pending = false; fit(host); });
    }).observe(host);
  });
  deck.on("ready", fitAll);
  deck.on("slidechanged", fitAll);
  deck.on("fragmentshown", fitAll);
  deck.on("resize", fitAll);
  deck.initialize();
})();
