// Draws the graph page's nodes and edges (from #graph-canvas's data-graph) as SVG with a small force layout.
// No dependency: Fruchterman–Reingold with grid-bucketed repulsion, so 2,000 nodes stay quick.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var WIDTH = 960, HEIGHT = 560, PORTRAIT = 600;  // a narrower canvas (a phone) gets a portrait drawing

  function layout(nodes, edges) {
    var n = nodes.length;
    var k = Math.sqrt((WIDTH * HEIGHT) / Math.max(n, 1)) * 1.1;
    nodes.forEach(function (d, i) {  // deterministic start: a golden-angle spiral
      var r = k * 0.6 * Math.sqrt(i + 0.5), a = i * 2.399963;
      d.x = WIDTH / 2 + r * Math.cos(a);
      d.y = HEIGHT / 2 + r * Math.sin(a);
    });
    var iterations = n > 1000 ? 90 : n > 300 ? 160 : 260;
    var temperature = k * 2, cell = 3 * k;
    for (var it = 0; it < iterations; it++) {
      var grid = new Map();
      nodes.forEach(function (d, i) {
        d.dx = 0; d.dy = 0;
        var key = Math.floor(d.x / cell) + "," + Math.floor(d.y / cell);
        if (!grid.has(key)) grid.set(key, []);
        grid.get(key).push(i);
      });
      nodes.forEach(function (d) { repel(d, nodes, grid, cell, k); });
      edges.forEach(function (e) {
        var s = nodes[e[0]], t = nodes[e[1]];
        var dx = s.x - t.x, dy = s.y - t.y, dist = Math.sqrt(dx * dx + dy * dy) || 0.01, f = dist / k;
        s.dx -= dx * f; s.dy -= dy * f; t.dx += dx * f; t.dy += dy * f;
      });
      nodes.forEach(function (d) {
        d.dx += (WIDTH / 2 - d.x) * 0.05 * k / 10;
        d.dy += (HEIGHT / 2 - d.y) * 0.05 * k / 10;
        var len = Math.sqrt(d.dx * d.dx + d.dy * d.dy) || 1, step = Math.min(len, temperature);
        d.x += (d.dx / len) * step;
        d.y += (d.dy / len) * step;
      });
      temperature *= 0.975;
    }
    fit(nodes);
  }

  function repel(d, nodes, grid, cell, k) {
    var cx = Math.floor(d.x / cell), cy = Math.floor(d.y / cell), limit = cell * cell;
    for (var gx = cx - 1; gx <= cx + 1; gx++) {
      for (var gy = cy - 1; gy <= cy + 1; gy++) {
        var members = grid.get(gx + "," + gy);
        if (!members) continue;
        for (var m = 0; m < members.length; m++) {
          var o = nodes[members[m]];
          if (o === d) continue;
          var dx = d.x - o.x, dy = d.y - o.y, dist2 = dx * dx + dy * dy;
          if (dist2 > limit) continue;
          if (dist2 < 0.01) { dx = Math.random() - 0.5; dy = Math.random() - 0.5; dist2 = 0.5; }
          var f = (k * k) / dist2;
          d.dx += dx * f; d.dy += dy * f;
        }
      }
    }
  }

  function fit(nodes) {
    var minX = Infinity, minY = Infinity, maxX = -Infinity, maxY = -Infinity, margin = 30;
    nodes.forEach(function (d) {
      minX = Math.min(minX, d.x); maxX = Math.max(maxX, d.x);
      minY = Math.min(minY, d.y); maxY = Math.max(maxY, d.y);
    });
    var scale = Math.min((WIDTH - 2 * margin) / Math.max(maxX - minX, 1), (HEIGHT - 2 * margin) / Math.max(maxY - minY, 1));
    nodes.forEach(function (d) {
      d.x = margin + (d.x - minX) * scale + (WIDTH - 2 * margin - (maxX - minX) * scale) / 2;
      d.y = margin + (d.y - minY) * scale + (HEIGHT - 2 * margin - (maxY - minY) * scale) / 2;
    });
  }

  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    if (parent) parent.appendChild(node);
    return node;
  }

  function noteUrl(path) {
    // A document (PDF, slides, image…) opens on its page of extracted text, a note in the viewer.
    var prefix = /\.md$/i.test(path) ? "/notes/" : "/documents/";
    return prefix + path.split("/").map(encodeURIComponent).join("/");
  }

  function draw(container, data) {
    var nodes = data.nodes.map(function (n) {
      return { id: n[0], title: n[1], color: n[2], degree: n[3], folder: n[4], label: n[5] === 1 };
    });
    var edges = data.edges.map(function (e) { return [e[0], e[1], e[2] ? "synapse" : "link"]; });
    data = { nodes: nodes, edges: edges };
    HEIGHT = container.clientWidth && container.clientWidth < PORTRAIT ? WIDTH * 1.25 : 560;
    layout(data.nodes, edges);
    var svg = el("svg", { viewBox: "0 0 " + WIDTH + " " + HEIGHT, class: "graph-svg" });
    var edgeLayer = el("g", { class: "edges" }, svg), nodeLayer = el("g", { class: "nodes" }, svg);
    var labelLayer = el("g", { class: "labels" }, svg);  // above every node: a hub's label is never hidden
    edges.forEach(function (e) {
      var s = data.nodes[e[0]], t = data.nodes[e[1]];
      el("line", { x1: s.x.toFixed(1), y1: s.y.toFixed(1), x2: t.x.toFixed(1), y2: t.y.toFixed(1), class: "edge " + e[2] }, edgeLayer);
    });
    data.nodes.forEach(function (d) {
      var link = el("a", { href: noteUrl(d.id), "data-path": d.id, class: "node" }, nodeLayer);
      d.radius = Math.min(4 + 2 * Math.sqrt(d.degree), 16);
      el("circle", { cx: d.x.toFixed(1), cy: d.y.toFixed(1), r: d.radius.toFixed(1), fill: d.color }, link);
      el("title", {}, link).textContent = d.title + " — " + d.folder + " (" + d.degree + " liens)";
    });
    container.replaceChildren(svg);  // in the page first: a label's box can only be measured there
    placeLabels(data.nodes, labelLayer, svg);
  }

  // The nodes the server chose (the best connected, first) get a label, in that order, so a hub is named
  // before an outlier. A label sits GAP screen pixels from its node's disc, on one of eight sides, and only
  // where it covers no other label and no other node and stays in the drawing: first where no other node is
  // as near to it as its own (it reads as that node's), else anywhere clear; a label with no such spot is
  // left to hover (<title>). Sizes are in screen pixels whatever the drawing's scale: a phone reads them too.
  var FONT_PX = 10, HALO_PX = 3, GAP_PX = 2, NEAR_PX = 4;

  function placeLabels(nodes, layer, svg) {
    var px = WIDTH / (svg.getBoundingClientRect().width || WIDTH);  // one screen pixel in drawing units
    var style = "font-size:" + (FONT_PX * px).toFixed(2) + "px;stroke-width:" + (HALO_PX * px).toFixed(2) + "px";
    var placed = [], halo = (HALO_PX / 2) * px;
    nodes.forEach(function (d) {
      if (!d.label) return;
      var text = el("text", { "data-path": d.id, x: 0, y: 0, style: style }, layer);
      text.textContent = d.title;
      var origin = text.getBBox(), boxes = spots(d, origin, GAP_PX * px);
      var clear = boxes.filter(function (box) {
        var padded = grow(box, halo);
        return inside(box) && !placed.some(function (o) { return overlaps(padded, o); }) &&
          !nodes.some(function (o) { return o !== d && rectToCircle(padded, o) < o.radius; });
      });
      var own = function (box) {
        return !nodes.some(function (o) { return o !== d && rectToCircle(box, o) < o.radius + NEAR_PX * px; });
      };
      var best = clear.find(own) || clear[0];
      if (!best) { text.remove(); return; }
      text.setAttribute("x", (best.x - origin.x).toFixed(1));
      text.setAttribute("y", (best.y - origin.y).toFixed(1));
      placed.push(grow(best, halo));
    });
  }

  // The eight boxes a label may take round its node, each ``gap`` from the disc: beside, above, below,
  // and at the four diagonals (the box's corner at 45° on the circle, pushed out by the gap).
  function spots(d, box, gap) {
    var w = box.width, h = box.height, r = d.radius, x = d.x, y = d.y, c = (r + gap) * Math.SQRT1_2;
    return [[x + r + gap, y - h / 2], [x - r - gap - w, y - h / 2], [x - w / 2, y - r - gap - h],
            [x - w / 2, y + r + gap], [x + c, y - c - h], [x - c - w, y - c - h],
            [x + c, y + c], [x - c - w, y + c]].map(function (p) { return { x: p[0], y: p[1], width: w, height: h }; });
  }

  // How far a box is from a node's centre (0 when the centre is inside it).
  function rectToCircle(box, d) {
    var dx = Math.max(box.x - d.x, 0, d.x - box.x - box.width);
    var dy = Math.max(box.y - d.y, 0, d.y - box.y - box.height);
    return Math.sqrt(dx * dx + dy * dy);
  }

  function inside(box) { return box.x >= 0 && box.y >= 0 && box.x + box.width <= WIDTH && box.y + box.height <= HEIGHT; }

  function grow(box, by) { return { x: box.x - by, y: box.y - by, width: box.width + 2 * by, height: box.height + 2 * by }; }

  function overlaps(a, b) {
    return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
  }

  // The data travels in an attribute: htmx drops <script> elements from swapped content.
  function render() {
    var container = document.getElementById("graph-canvas");
    if (!container || !container.dataset.graph || container.dataset.drawn) return;
    var data = JSON.parse(container.dataset.graph);
    if (data.nodes.length) draw(container, data);
    container.dataset.drawn = "1";
  }

  document.addEventListener("DOMContentLoaded", render);
  document.addEventListener("htmx:afterSettle", render);
})();
