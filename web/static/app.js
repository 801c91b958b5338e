// ObsiRAG's only page script (no inline scripts: the CSP forbids them).
(function () {
  "use strict";
  var mermaidLoading = null;

  function composer() { return document.getElementById("composer"); }

  // Enter sends the question, Shift+Enter adds a line.
  document.addEventListener("keydown", function (event) {
    var form = composer();
    if (!form || event.target.name !== "question" || event.key !== "Enter" || event.shiftKey || event.isComposing) return;
    event.preventDefault();
    if (event.target.value.trim()) form.requestSubmit();
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var form = composer();
    if (!form || event.detail.elt !== form || !event.detail.successful) return;
    form.querySelector("textarea").value = "";
    // A per-question choice (« rédiger avec le modèle ») is unticked once its question is sent.
    form.querySelectorAll("[data-per-question]").forEach(function (box) { box.checked = false; });
    var hint = document.getElementById("chat-hint");
    if (hint) hint.remove();
  });

  // An ask-again button (enregistrer le rappel, continuer, réessayer) sends once: a second click would ask
  // again ("oui" twice). It comes back only when the request failed.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = event.detail.elt;
    if (!form.matches || !form.matches("form.ask-again")) return;
    if (form.dataset.sent) { event.preventDefault(); return; }
    form.dataset.sent = "1";
    var button = form.querySelector("button");
    button.disabled = true;
    button.dataset.label = button.textContent;
    button.textContent = button.textContent + " ✓";
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail.elt;
    if (!form.matches || !form.matches("form.ask-again") || event.detail.successful) return;
    delete form.dataset.sent;
    var button = form.querySelector("button");
    button.disabled = false;
    button.textContent = button.dataset.label || button.textContent;
  });

  // A failed htmx request (lost CSRF cookie, server down…) says so instead of doing nothing.
  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail.xhr.status;
    var message = status === 403 ? "Action refusée (jeton expiré ?) : recharge la page." : "Erreur " + status + " : réessaie.";
    var flash = document.getElementById("page-error") || document.createElement("p");
    flash.id = "page-error";
    flash.className = "alert";
    flash.setAttribute("role", "alert");
    flash.textContent = message;
    document.querySelector("main").prepend(flash);
  });

  // Keep the newest part of the conversation in view while it streams.
  function followThread() {
    var thread = document.getElementById("thread");
    if (thread) window.scrollTo({ top: document.body.scrollHeight });
  }
  document.addEventListener("htmx:sseMessage", followThread);

  // Mermaid: loaded only on pages that have a diagram (it is large), drawn with its strict security level.
  function drawDiagrams(root) {
    var blocks = (root || document).querySelectorAll("pre.mermaid:not([data-processed])");
    if (!blocks.length) return;
    if (!mermaidLoading) {
      mermaidLoading = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = "/static/vendor/mermaid.min.js";
        script.onload = function () {
          // Labels as SVG text, never HTML: a hostile label (<img onerror=…>) stays text and fetches nothing.
          window.mermaid.initialize({
            startOnLoad: false, securityLevel: "strict", htmlLabels: false, flowchart: { htmlLabels: false },
            theme: "neutral"
          });
          resolve(window.mermaid);
        };
        script.onerror = reject;
        document.head.appendChild(script);
      });
    }
    Array.prototype.forEach.call(blocks, function (block) { block.textContent = inertTags(block.textContent); });
    mermaidLoading.then(function (mermaid) {
      return mermaid.run({ nodes: Array.prototype.slice.call(blocks), suppressErrors: true });
    });
  }

  // Mermaid decodes a diagram's text through the DOM before its own sanitiser runs, so a label such as
  // <img src=x onerror=…> reaches a live element: an HTML tag in the source becomes Mermaid's entity
  // code (#lt;), drawn as a plain "<". Arrows (-->, <-->), <<annotations>> and <br> line breaks are kept.
  function inertTags(source) {
    return source.replace(/(?<!<)<(?!br\s*\/?>)(?=[A-Za-z\/!?])/gi, "#lt;");
  }

  // A click on a diagram opens it large in a viewer (Escape or the button closes it).
  document.addEventListener("click", function (event) {
    var block = event.target.closest && event.target.closest(".mermaid-block");
    if (!block || !block.querySelector("svg")) return;
    var viewer = document.getElementById("mermaid-viewer");
    if (!viewer) {
      viewer = document.createElement("dialog");
      viewer.id = "mermaid-viewer";
      viewer.className = "mermaid-viewer";
      viewer.innerHTML = '<form method="dialog"><button class="close">Fermer</button></form><div class="mermaid-viewer-body"></div>';
      document.body.appendChild(viewer);
    }
    var body = viewer.querySelector(".mermaid-viewer-body");
    body.replaceChildren(block.querySelector("svg").cloneNode(true));
    viewer.showModal();
  });

  document.addEventListener("DOMContentLoaded", function () { drawDiagrams(document); });
  document.addEventListener("htmx:afterSettle", function (event) { drawDiagrams(event.detail.elt); });
  // A cited note opened from an answer teaches the search (POST /sources/mark, « opened »): sent with
  // keepalive so that the navigation, kept, does not cancel it. The server reads the question from the turn.
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a.source-link[data-turn]");
    if (!link) return;
    var headers = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
    headers["Content-Type"] = "application/x-www-form-urlencoded";
    var body = new URLSearchParams({ turn: link.dataset.turn, path: link.dataset.path, verdict: "opened" });
    fetch("/sources/mark", { method: "POST", headers: headers, body: body, keepalive: true, credentials: "same-origin" });
  });
  // The cards page: space shows the answer, 1–4 grade it, u undoes the last grade (each key clicks its button).
  document.addEventListener("keydown", function (event) {
    var panel = document.getElementById("card-panel");
    if (!panel || event.ctrlKey || event.metaKey || event.altKey || /INPUT|TEXTAREA|SELECT/.test(event.target.tagName)) return;
    var button = panel.querySelector('[data-key="' + (event.key === " " ? " " : event.key.toLowerCase()) + '"]');
    if (!button) return;
    event.preventDefault();
    button.click();
  });
})();
