"""The style sheet and script that `pcm.visualize_page` inlines into the knowledge-graph page.

The script reads the page's JSON (`#memory-data`) and the SVG the server drew, and does
everything interactive: the filters (type, date range, entity, search; also read from the URL,
`#type=fact,hypothesis&entity=<name>&q=<text>&from=YYYY-MM-DD&to=YYYY-MM-DD&id=<memory id>&zoom=3`
or just `#<memory id>`), zoom and pan (by changing the SVG's viewBox), the side panel, and the
labels: it shows, in order of importance, those whose boxes do not overlap a label already
shown, and writes what it did into the DOM (`data-visible-count`, `data-label-overlaps`, ...)
so that tests and people can check it.
"""

PAGE_STYLE = """
body{font-family:system-ui,sans-serif;margin:0;display:flex;height:100vh;overflow:hidden}
#graph{flex:1;display:flex;flex-direction:column;min-width:0}
header{padding:6px 12px;border-bottom:1px solid #e4e4e4;font-size:12px}
header h3{margin:0 0 4px 0;font-size:15px}
#filters{display:flex;flex-wrap:wrap;gap:4px 12px;align-items:center;margin-bottom:4px}
#filters input[type=search]{width:180px} #filters select{max-width:180px}
.legend span{margin-right:10px;white-space:nowrap;color:#555}
.legend i{display:inline-block;width:10px;height:10px;margin-right:3px;border-radius:5px}
.legend i.line{height:3px;border-radius:0;vertical-align:middle}
#canvas{flex:1;position:relative;min-height:0}
#drawing{width:100%;height:100%;display:block;cursor:grab;--k:1}
#drawing.panning{cursor:grabbing}
#panel{width:360px;padding:12px;border-left:1px solid #ddd;overflow:auto;font-size:13px}
#panel .content{font-size:14px} #panel a{color:#1d5c87;text-decoration:none;cursor:pointer}
ol.chain{padding-left:20px} ol.chain li{margin-bottom:6px} ol.chain li.current{font-weight:600}
table{border-collapse:collapse} td{border-bottom:1px solid #eee;padding:2px 4px;vertical-align:top}
#tip{position:absolute;max-width:320px;background:#fffffe;border:1px solid #bbb;border-radius:4px;
  padding:4px 6px;font-size:12px;pointer-events:none;box-shadow:0 1px 4px rgba(0,0,0,.15)}
.lane-name,.tick{font-size:calc(10px * var(--k));fill:#8a8f96}
.tick{text-anchor:middle} .grid{stroke:#e3e6ea;stroke-width:calc(1px * var(--k))}
.edge{stroke-width:calc(1.2px * var(--k));opacity:.6}
.edge[data-relation=supersedes]{stroke-width:calc(2.6px * var(--k));opacity:.95}
.edge[data-relation=mentions]{stroke-width:calc(.8px * var(--k));opacity:.45}
.edge[data-faded]{opacity:.08} .edge[data-chain]{stroke-width:calc(4.5px * var(--k));opacity:1}
.node{cursor:pointer} .node circle{stroke:#fff;stroke-width:calc(1px * var(--k))}
.node[data-dormant] circle{fill-opacity:.3}
.node[data-faded]{opacity:.15}
.node[data-match] circle{stroke:#111;stroke-width:calc(2px * var(--k))}
.node[data-chain] circle{stroke:#c0392b;stroke-width:calc(2.5px * var(--k))}
.node[data-selected] circle{stroke:#000;stroke-width:calc(3.5px * var(--k))}
.node[data-hover] circle{stroke:#333;stroke-width:calc(2px * var(--k))}
.hidden{display:none}
.label{display:none;font-size:calc(11px * var(--k));fill:#1f2328;paint-order:stroke;stroke:#fff;
  stroke-width:calc(3px * var(--k));stroke-linejoin:round;pointer-events:none}
.label.shown,.label.measure{display:inline} .label.measure{visibility:hidden}
.label[data-entity]{font-weight:600;fill:#3d6b2f}
"""

PAGE_SCRIPT = r"""
(() => {
'use strict';
const data = JSON.parse(document.getElementById('memory-data').textContent);
const nodes = data.nodes, ids = Object.keys(nodes);
const svg = document.getElementById('drawing'), panel = document.getElementById('panel');
const tip = document.getElementById('tip'), counter = document.getElementById('count');
const $ = id => document.getElementById(id);
const typeBoxes = [...document.querySelectorAll('input[name=type]')];
const nodeEl = new Map([...document.querySelectorAll('#nodes .node')].map(g => [g.dataset.id, g]));
const labelEl = new Map([...document.querySelectorAll('#labels .label')].map(t => [t.dataset.id, t]));
const ticks = [...document.querySelectorAll('#background .tick')];
const edges = [...document.querySelectorAll('#edges .edge')].map(el => (
  {el, source: el.dataset.source, target: el.dataset.target, relation: el.dataset.relation}));
// links too many to draw at once (every turn supports or mentions several memories): shown for the
// selected memory or entity, or all with the checkbox
const ON_DEMAND = new Set(['mentions', 'supports']);
const mentionedBy = {};
for (const id of ids) for (const e of nodes[id].mentions) (mentionedBy[e] ||= new Set()).add(id);
const full = {x: 0, y: 0, w: data.view[0], h: data.view[1]};
const LABEL_ZOOM = 2.5, FEW_NODES = 40, MAX_ZOOM = 40;
const state = {types: new Set(typeBoxes.map(b => b.value)), from: '', to: '', entity: '', q: '',
  selected: null, mentions: false, zoom: 1};
const firstPanel = panel.innerHTML;
let view = {...full}, visible = new Set(ids), matched = new Set(), metrics = null;

function esc(s) {
  return String(s ?? '').replace(/[&<>"']/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;',
    "'": '&#39;'})[c]);
}
function flag(el, name, on) { if (on) el.setAttribute('data-' + name, ''); else el.removeAttribute('data-' + name); }
function entityId(value) {
  if (!value) return '';
  if (nodes[value] && nodes[value].type === 'entity') return value;
  const wanted = value.trim().toLowerCase();
  return ids.find(id => nodes[id].type === 'entity' && nodes[id].content.trim().toLowerCase() === wanted) || '';
}

// ------------------------------------------------------------------ filters
function passes(id) {
  const n = nodes[id];
  if (state.entity && id === state.entity) return true;  // the chosen entity stays, whatever else is set
  if (!state.types.has(n.type)) return false;
  if ((state.from && n.date < state.from) || (state.to && n.date > state.to)) return false;
  return !state.entity || (mentionedBy[state.entity] || new Set()).has(id);
}
function apply() {
  const q = state.q.trim().toLowerCase();
  visible = new Set(ids.filter(passes));
  matched = new Set(q ? [...visible].filter(id => nodes[id].content.toLowerCase().includes(q) || id === q) : []);
  for (const id of ids) {
    const el = nodeEl.get(id);
    el.classList.toggle('hidden', !visible.has(id));
    flag(el, 'match', matched.has(id));
    flag(el, 'faded', q !== '' && visible.has(id) && !matched.has(id));
  }
  const chosen = state.entity || state.selected;
  for (const e of edges) {
    const lit = state.mentions || e.source === chosen || e.target === chosen;
    const shown = visible.has(e.source) && visible.has(e.target) && (!ON_DEMAND.has(e.relation) || lit);
    e.el.classList.toggle('hidden', !shown);
    flag(e.el, 'faded', q !== '' && !matched.has(e.source) && !matched.has(e.target));
  }
  counter.textContent = `${visible.size} of ${ids.length} memories shown` + (q ? ` · ${matched.size} match` : '');
  counter.dataset.visibleCount = visible.size;
  counter.dataset.matchCount = matched.size;
  writeQuery();
  placeLabels();
}

// ------------------------------------------------------------------ the URL
function readQuery() {
  const params = new URLSearchParams(location.search);
  const hash = location.hash.slice(1);
  if (hash && !hash.includes('=')) {
    try { params.set('id', decodeURIComponent(hash)); } catch (e) { params.set('id', hash); }
  }
  else new URLSearchParams(hash).forEach((value, key) => params.set(key, value));
  const types = (params.get('type') || '').split(',').filter(t => typeBoxes.some(b => b.value === t));
  state.types = new Set(types.length ? types : typeBoxes.map(b => b.value));
  state.from = params.get('from') || '';
  state.to = params.get('to') || '';
  state.entity = entityId(params.get('entity'));
  state.q = params.get('q') || '';
  state.zoom = Math.min(MAX_ZOOM, Math.max(1, parseFloat(params.get('zoom')) || 1));
  typeBoxes.forEach(b => { b.checked = state.types.has(b.value); });
  $('from').value = state.from; $('to').value = state.to; $('entity').value = state.entity; $('q').value = state.q;
  return params.get('id');
}
function writeQuery() {
  const params = new URLSearchParams();
  if (state.types.size < typeBoxes.length) params.set('type', [...state.types].join(','));
  if (state.from) params.set('from', state.from);
  if (state.to) params.set('to', state.to);
  if (state.entity) params.set('entity', nodes[state.entity].content);
  if (state.q) params.set('q', state.q);
  let hash = params.toString();
  if (state.selected) hash = (hash ? hash + '&id=' : '') + encodeURIComponent(state.selected);
  if (('#' + hash) === location.hash || (!hash && !location.hash)) return;
  try { history.replaceState(null, '', hash ? '#' + hash : location.pathname + location.search); } catch (e) { }
}

// ------------------------------------------------------------------ the panel
function chainOf(id) { return nodes[id].chain >= 0 ? data.chains[nodes[id].chain] : []; }
function memoryLink(id, text) { return `<a href="#${encodeURIComponent(id)}" data-go="${esc(id)}">${text}</a>`; }
function panelHtml(id) {
  const n = nodes[id], chain = chainOf(id);
  let out = `<b>${esc(n.type)}</b> · ${esc(n.domain || 'no domain')} · w=${n.weight} · ${esc(n.date)}`
    + (n.dormant ? ' · dormant' : '') + (n.speaker ? ` · ${esc(n.speaker)}` : '')
    + `<p class="content">${esc(n.content)}</p>`;
  if (chain.length) {
    out += '<b>Supersession chain</b> (older → newer)<ol class="chain">' + chain.map(c => {
      const m = nodes[c];
      return `<li${c === id ? ' class="current"' : ''}>${memoryLink(c, `${esc(m.date)} · w=${m.weight}`)}`
        + `${m.dormant ? ' · dormant' : ''}<br><span class="chain-content">${esc(m.content)}</span></li>`;
    }).join('') + '</ol>';
  }
  if (n.type === 'entity') {
    const count = (mentionedBy[id] || new Set()).size;
    out += `<p><button type="button" data-entity="${esc(id)}">show only the ${count} memories`
      + ' that mention it</button></p>';
  }
  const links = n.links.filter(l => n.type !== 'entity' || l[0] !== 'mentions');
  if (links.length) {
    out += '<b>Links</b><ul>' + links.slice(0, 30).map(([relation, other, direction]) =>
      `<li>${direction === 'out' ? esc(relation) + ' →' : '← ' + esc(relation)} `
      + `${memoryLink(other, esc(nodes[other].content.slice(0, 80)))}</li>`).join('')
      + (links.length > 30 ? `<li>and ${links.length - 30} more</li>` : '') + '</ul>';
  }
  const rows = n.history.map(h => `<tr><td>${esc(h.turn)}</td><td>${h.old === null ? 'new' : h.old.toFixed(3)}`
    + ` → ${h.new.toFixed(3)}</td><td>${esc(h.agent)}</td><td>${esc(h.reason)}</td></tr>`).join('');
  return out + `<b>History</b><table><tr><td>turn</td><td>weight</td><td>agent</td><td>reason</td></tr>${rows}</table>`;
}
function select(id) {
  if (!nodes[id]) return;
  state.selected = id;
  const chain = new Set(chainOf(id));
  for (const [other, el] of nodeEl) { flag(el, 'selected', other === id); flag(el, 'chain', chain.has(other)); }
  for (const e of edges) flag(e.el, 'chain', e.relation === 'supersedes' && chain.has(e.source) && chain.has(e.target));
  panel.innerHTML = panelHtml(id);
  apply();
}

// ------------------------------------------------------------------ zoom and pan
function unitsPerPixel() {
  const box = svg.getBoundingClientRect();
  return box.width && box.height ? Math.max(view.w / box.width, view.h / box.height) : view.w / full.w;
}
function setView(next) {
  const w = Math.min(full.w * 1.5, Math.max(full.w / MAX_ZOOM, next.w)), h = w * full.h / full.w;
  view = {x: next.x + (next.w - w) / 2, y: next.y + (next.h - h) / 2, w, h};
  svg.setAttribute('viewBox', `${view.x} ${view.y} ${view.w} ${view.h}`);
  svg.style.setProperty('--k', unitsPerPixel().toFixed(4));
  scheduleLabels();
}
function toUser(clientX, clientY) {
  const point = svg.createSVGPoint();
  point.x = clientX; point.y = clientY;
  return point.matrixTransform(svg.getScreenCTM().inverse());
}
function zoomAt(factor, x, y) {
  setView({x: x - (x - view.x) / factor, y: y - (y - view.y) / factor, w: view.w / factor, h: view.h / factor});
}
function zoomCentre(factor) { zoomAt(factor, view.x + view.w / 2, view.y + view.h / 2); }
function fitShown() {
  const shown = [...visible].map(id => nodes[id]);
  if (!shown.length) return setView(full);
  const left = Math.min(...shown.map(n => n.x - n.r)), right = Math.max(...shown.map(n => n.x + n.r));
  const top = Math.min(...shown.map(n => n.y - n.r)), bottom = Math.max(...shown.map(n => n.y + n.r));
  const w = Math.max(right - left, (bottom - top) * full.w / full.h) + 80, h = w * full.h / full.w;
  setView({x: (left + right - w) / 2, y: (top + bottom - h) / 2, w, h});
}

// ------------------------------------------------------------------ labels
function measureLabels() {
  // each label's box at the current text size; boxes scale with --k, so one measurement serves every zoom
  const k = unitsPerPixel();
  for (const el of labelEl.values()) { el.setAttribute('x', 0); el.setAttribute('y', 0); el.classList.add('measure'); }
  metrics = new Map([...labelEl].map(([id, el]) => { const b = el.getBBox(); return [id, {b, k}]; }));
  for (const el of labelEl.values()) el.classList.remove('measure');
}
function labelOrder() {
  const order = [];
  if (state.selected) order.push(state.selected, ...chainOf(state.selected));
  const byWeight = list => list.sort((a, b) => nodes[b].weight - nodes[a].weight);
  order.push(...byWeight([...matched]));
  if (state.entity) order.push(state.entity);
  const entities = ids.filter(id => nodes[id].type === 'entity' && visible.has(id));
  order.push(...entities.sort((a, b) => (mentionedBy[b]?.size || 0) - (mentionedBy[a]?.size || 0)));
  order.push(...data.chains.map(chain => chain[chain.length - 1]));  // what each chain holds now
  const important = new Set(order.filter(id => visible.has(id)));
  if (full.w / view.w >= LABEL_ZOOM || visible.size <= FEW_NODES) order.push(...byWeight([...visible]));
  return {order: [...new Set(order)].filter(id => visible.has(id)), important};
}
function boxOf(el) { const b = el.getBBox(); return {x: b.x, y: b.y, w: b.width, h: b.height}; }
function overlaps(a, b) { return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h; }
function placeLabels() {
  // the most important labels first; each at the first of four spots around its circle that keeps
  // clear of the labels already placed and of other circles (an important label, failing that, of labels only)
  if (!metrics) measureLabels();
  const k = unitsPerPixel(), pad = 2 * k, placed = [];
  const inView = box => box.x >= view.x && box.y >= view.y && box.x + box.w <= view.x + view.w
    && box.y + box.h <= view.y + view.h;
  const circles = [...visible].map(id => {
    const n = nodes[id]; return {id, x: n.x - n.r, y: n.y - n.r, w: 2 * n.r, h: 2 * n.r};
  }).filter(inView).concat(ticks.map(boxOf));  // the dates under the drawing are in the way too
  for (const el of labelEl.values()) el.classList.remove('shown');
  const {order, important} = labelOrder();
  for (const id of order) {
    const n = nodes[id], m = metrics.get(id), scale = k / m.k, w = m.b.width * scale, h = m.b.height * scale;
    // below, above (slid sideways to stay in view), right of and left of the circle
    const spots = [[n.x - w / 2, n.y + n.r + 11 * k, true], [n.x - w / 2, n.y - n.r - 4 * k, true],
      [n.x + n.r + 3 * k, n.y + 4 * k, false], [n.x - n.r - 3 * k - w, n.y + 4 * k, false]].map(([x, y, slide]) => {
      const left = slide ? Math.max(view.x + pad, Math.min(x, view.x + view.w - w - pad)) : x;
      const box = {x: left + m.b.x * scale - pad, y: y + m.b.y * scale - pad, w: w + 2 * pad, h: h + 2 * pad};
      return {left, y, box};
    }).filter(spot => inView(spot.box) && !placed.some(other => overlaps(spot.box, other)));
    const clear = spots.find(s => !circles.some(c => c.id !== id && overlaps(s.box, c)));
    const spot = clear || (important.has(id) ? spots[0] : null);
    if (!spot) continue;
    const el = labelEl.get(id);
    el.setAttribute('x', spot.left.toFixed(1)); el.setAttribute('y', spot.y.toFixed(1));
    el.classList.add('shown');
    placed.push(spot.box);
  }
  countOverlaps();
}
function countOverlaps() {
  // measured independently of the placement above: the browser's boxes of the labels now shown
  const boxes = [...labelEl.values()].filter(el => el.classList.contains('shown')).map(boxOf);
  let count = 0;
  for (let i = 0; i < boxes.length; i++) {
    for (let j = i + 1; j < boxes.length; j++) count += overlaps(boxes[i], boxes[j]);
  }
  svg.dataset.labelOverlaps = count;
  svg.dataset.labelsShown = boxes.length;
}
let labelsQueued = false;
function scheduleLabels() {
  if (labelsQueued) return;
  labelsQueued = true;
  requestAnimationFrame(() => { labelsQueued = false; placeLabels(); });
}

// ------------------------------------------------------------------ events
let drag = null;
svg.addEventListener('wheel', ev => {
  ev.preventDefault();
  const at = toUser(ev.clientX, ev.clientY);
  zoomAt(Math.exp(-ev.deltaY * 0.0015), at.x, at.y);
}, {passive: false});
svg.addEventListener('pointerdown', ev => {
  drag = {x: ev.clientX, y: ev.clientY, view: {...view}, moved: false};
});
window.addEventListener('pointermove', ev => {
  if (!drag) return;
  const dx = ev.clientX - drag.x, dy = ev.clientY - drag.y;
  if (!drag.moved && Math.hypot(dx, dy) < 4) return;
  drag.moved = true;
  svg.classList.add('panning');
  const k = unitsPerPixel();
  setView({...drag.view, x: drag.view.x - dx * k, y: drag.view.y - dy * k});
});
window.addEventListener('pointerup', () => {
  svg.classList.remove('panning');
  setTimeout(() => { drag = null; }, 0);
});
svg.addEventListener('click', ev => {
  const g = ev.target.closest('.node');
  if (g && !(drag && drag.moved)) select(g.dataset.id);
});
svg.addEventListener('pointerover', ev => {
  const g = ev.target.closest('.node');
  if (!g) return;
  const n = nodes[g.dataset.id];
  flag(g, 'hover', true);
  tip.innerHTML = `<b>${esc(n.type)}</b> · ${esc(n.date)} · w=${n.weight}<br>${esc(n.content)}`;
  tip.hidden = false;
});
svg.addEventListener('pointermove', ev => {
  if (tip.hidden) return;
  const box = svg.parentNode.getBoundingClientRect();
  tip.style.left = Math.min(ev.clientX - box.left + 14, box.width - 330) + 'px';
  tip.style.top = (ev.clientY - box.top + 14) + 'px';
});
svg.addEventListener('pointerout', ev => {
  const g = ev.target.closest('.node');
  if (g) { flag(g, 'hover', false); tip.hidden = true; }
});
panel.addEventListener('click', ev => {
  const go = ev.target.closest('[data-go]'), only = ev.target.closest('[data-entity]');
  if (go) { ev.preventDefault(); select(go.dataset.go); }
  if (only) { state.entity = only.dataset.entity; $('entity').value = state.entity; apply(); }
});
typeBoxes.forEach(b => b.addEventListener('change', () => {
  state.types = new Set(typeBoxes.filter(x => x.checked).map(x => x.value)); apply();
}));
$('from').addEventListener('change', ev => { state.from = ev.target.value; apply(); });
$('to').addEventListener('change', ev => { state.to = ev.target.value; apply(); });
$('entity').addEventListener('change', ev => { state.entity = ev.target.value; apply(); });
$('q').addEventListener('input', ev => { state.q = ev.target.value; apply(); });
$('show-mentions').addEventListener('change', ev => { state.mentions = ev.target.checked; apply(); });
$('reset').addEventListener('click', () => {
  Object.assign(state, {types: new Set(typeBoxes.map(b => b.value)), from: '', to: '', entity: '', q: ''});
  state.selected = null;
  typeBoxes.forEach(b => { b.checked = true; });
  ['from', 'to', 'entity', 'q'].forEach(id => { $(id).value = ''; });
  for (const el of nodeEl.values()) { flag(el, 'selected', false); flag(el, 'chain', false); }
  for (const e of edges) flag(e.el, 'chain', false);
  panel.innerHTML = firstPanel;
  setView(full);
  apply();
});
$('zoom-in').addEventListener('click', () => zoomCentre(1.6));
$('zoom-out').addEventListener('click', () => zoomCentre(1 / 1.6));
$('zoom-fit').addEventListener('click', fitShown);
window.addEventListener('resize', () => setView(view));
window.addEventListener('hashchange', () => { const id = readQuery(); if (id) select(id); else apply(); });

setView(full);
const opened = readQuery();
if (state.zoom > 1) {  // `zoom=<factor>` in the URL: zoomed in on the memory opened, or the middle
  const at = nodes[opened] || {x: full.w / 2, y: full.h / 2}, w = full.w / state.zoom, h = full.h / state.zoom;
  setView({x: at.x - w / 2, y: at.y - h / 2, w, h});
}
if (opened && nodes[opened]) select(opened); else apply();
})();
"""
