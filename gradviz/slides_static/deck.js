// gradviz slides: start reveal.js and fit each widget's iframe to the page inside it.
(function () {
  "use strict";
  var deck = new Reveal(document.querySelector(".reveal"), {
    width: 1280, height: 800, margin: 0.04,
    hash: true, controls: true, progress: true, slideNumber: "c/t",
    center: false, transition: "slide",
    // no remote plugins, and no autoplay: the widgets start when the presenter presses play
    autoPlayMedia: false,
  });
  window.gradvizDeck = deck;
  deck.initialize();

  // A widget is a whole page in an iframe (srcdoc). Its height follows its content; keys that a
  // presentation clicker sends (PageUp/PageDown) still turn the slides after a click in a widget.
  function fit(frame) {
    try {
      var doc = frame.contentDocument;
      if (!doc || !doc.documentElement) return;
      var h = Math.max(doc.documentElement.scrollHeight, doc.body ? doc.body.scrollHeight : 0);
      if (h > 0) frame.style.height = Math.min(h + 4, 740) + "px";
    } catch (e) { /* a frame we cannot read keeps its default height */ }
  }
  document.querySelectorAll("iframe.gradviz-widget").forEach(function (frame) {
    function watch() {
      fit(frame);
      try {
        var doc = frame.contentDocument;
        new ResizeObserver(function () { fit(frame); }).observe(doc.documentElement);
        doc.addEventListener("keydown", function (e) {
          if (e.key === "PageDown") { deck.next(); e.preventDefault(); }
          if (e.key === "PageUp") { deck.prev(); e.preventDefault(); }
        });
      } catch (e) { /* cross-origin: leave it */ }
    }
    if (frame.contentDocument && frame.contentDocument.readyState === "complete") watch();
    frame.addEventListener("load", watch);
  });
  deck.on("slidechanged", function () {
    document.querySelectorAll(".present iframe.gradviz-widget").forEach(fit);
  });
})();
