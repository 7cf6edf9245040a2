/**
 * The dashboard's one page: inline style and script (no CDN, no file fetched but its own JSON), SVG drawn by
 * the script. It reads the token from its address once (then keeps it in the tab's session storage and takes it
 * out of the address bar), and polls `api/view` with it every interval.
 */

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em 2em;color:#222;background:#fafafa}
h1{font-size:20px;margin:0 0 .2em}h2{font-size:16px;margin:1.4em 0 .4em}h3{font-size:14px;margin:1em 0 .3em}
#status{color:#555}#status.error{color:#b00020;font-weight:600}
table{border-collapse:collapse;margin:.4em 0;background:#fff}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
th{background:#f0f0f0}td.n{text-align:right;font-variant-numeric:tabular-nums}
code,.tag{font-family:ui-monospace,monospace;font-size:12px}
.mixed{color:#b00020;font-weight:600}.ok{color:#1b7f3a}.down{color:#b00020;font-weight:600}
svg{font-size:11px;background:#fff}
`;

const SCRIPT = `
(() => {
  'use strict';
  const INTERVAL = Number(document.body.dataset.interval) || 2000;
  const SVG = 'http://www.w3.org/2000/svg';
  const params = new URLSearchParams(location.search);
  const token = params.get('token') || sessionStorage.getItem('sluice-dashboard-token') || '';
  if (params.get('token')) {
    sessionStorage.setItem('sluice-dashboard-token', token);
    history.replaceState(null, '', location.pathname);
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
    for (const child of children) node.append(child instanceof Node ? child : String(child));
    return node;
  }
  function shape(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
    if (text !== undefined) node.textContent = String(text);
    return node;
  }
  const count = (n) => Math.round(n).toLocaleString('en-US');
  const percent = (n) => (n * 100).toFixed(1) + '%';
  const time = (ms) => new Date(ms).toISOString().slice(11, 19);
  const ruleId = (rule) => rule.domain + '/' + rule.rule;

  function table(headers, rows, attrs) {
    const head = el('tr', {}, ...headers.map((h) => el('th', {}, h)));
    return el('table', attrs || {}, el('thead', {}, head), el('tbody', {}, ...rows));
  }
  function cell(value, cls) {
    return el('td', cls ? { class: cls } : {}, value);
  }

  function versions(view) {
    const rows = view.board.domains.map((d) =>
      el('tr', { 'data-domain': d.domain, class: d.mixed ? 'mixed' : '' },
        cell(d.domain || '(none)'),
        cell(d.versions.map((v) => v.version + ' on ' + v.gateways.join(', ')).join('; ')),
        cell(d.mixed ? 'MIXED' : 'one version', d.mixed ? 'mixed' : 'ok')));
    const mixedRules = view.board.rules.filter((r) => r.mixed).map((r) =>
      el('tr', { 'data-rule': ruleId(r), class: 'mixed' },
        cell(ruleId(r)),
        cell(r.versions.map((v) => v.version + ' on ' + v.gateways.join(', ')).join('; ')),
        cell('MIXED', 'mixed')));
    return [el('h2', {}, 'Gateway versions'), table(['domain or rule', 'versions', ''], [...rows, ...mixedRules], { id: 'versions' })];
  }

  function health(view) {
    const rows = view.board.gateways.map((g) => {
      const s = g.store;
      const state = !s.connected ? 'down' : s.breaker === 'closed' ? 'connected' : 'breaker ' + s.breaker;
      return el('tr', { 'data-gateway': g.gateway },
        cell(g.gateway), cell(g.version), cell(state, s.connected ? 'ok' : 'down'),
        cell(s.meanMs === null ? '–' : s.meanMs.toFixed(2), 'n'), cell(s.maxMs === null ? '–' : s.maxMs.toFixed(2), 'n'),
        cell(count(s.errors), 'n'), cell(s.failingOpenSince === null ? '' : time(s.failingOpenSince)), cell(time(g.at)));
    });
    return [el('h2', {}, 'Store health'),
      table(['gateway', 'rules version', 'store', 'mean ms', 'max ms', 'errors', 'failing open since', 'board at'], rows, { id: 'health' })];
  }

  function heatMap(view) {
    const rules = view.board.rules;
    const totals = new Map();
    for (const rule of rules) for (const [route, requests] of rule.routes) totals.set(route, (totals.get(route) || 0) + requests);
    const routes = [...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([route]) => route);
    const left = 180, top = 90, w = 90, h = 28;
    const chart = shape('svg', { viewBox: '0 0 ' + (left + routes.length * w + 10) + ' ' + (top + rules.length * h + 10),
      role: 'img', 'aria-label': 'Denial rate by rule and route', width: left + routes.length * w + 10 });
    routes.forEach((route, c) => {
      const x = left + c * w + w / 2;
      chart.append(shape('text', { x, y: top - 8, 'text-anchor': 'start', transform: 'rotate(-35 ' + x + ' ' + (top - 8) + ')' }, route));
    });
    rules.forEach((rule, r) => {
      const y = top + r * h;
      chart.append(shape('text', { x: left - 8, y: y + h / 2 + 4, 'text-anchor': 'end' }, rule.rule));
      const byRoute = new Map(rule.routes.map(([route, requests, denied]) => [route, [requests, denied]]));
      routes.forEach((route, c) => {
        const seen = byRoute.get(route);
        const rate = seen && seen[0] > 0 ? seen[1] / seen[0] : 0;
        const fill = seen ? 'rgb(255,' + Math.round(255 * (1 - rate)) + ',' + Math.round(255 * (1 - rate)) + ')' : '#eee';
        const box = shape('rect', { x: left + c * w, y, width: w - 2, height: h - 2, fill, 'data-rule': ruleId(rule),
          'data-route': route, 'data-rate': rate.toFixed(4), 'data-requests': seen ? seen[0] : 0, 'data-denied': seen ? seen[1] : 0 });
        box.append(shape('title', {}, rule.rule + ' on ' + route + ': ' + (seen ? count(seen[1]) + ' denied of ' + count(seen[0]) : 'no requests')));
        chart.append(box);
        if (seen) chart.append(shape('text', { x: left + c * w + w / 2, y: y + h / 2 + 3, 'text-anchor': 'middle' }, percent(rate)));
      });
    });
    return [el('h2', {}, 'Denial rate by rule and route'), rules.length === 0 ? el('p', {}, 'no rule on the board') : chart];
  }

  function sparkline(points) {
    const width = 120, height = 24;
    const max = Math.max(1e-9, ...points);
    const step = points.length > 1 ? width / (points.length - 1) : 0;
    const line = points.map((p, i) => (i * step).toFixed(1) + ',' + (height - 2 - (p / max) * (height - 4)).toFixed(1)).join(' ');
    const chart = shape('svg', { viewBox: '0 0 ' + width + ' ' + height, width, height, class: 'spark', role: 'img', 'aria-label': 'requests per second' });
    chart.append(shape('polyline', { points: line || '0,' + (height - 2), fill: 'none', stroke: '#d62728', 'stroke-width': 1.5 }));
    return chart;
  }

  function hotKeys(view, history) {
    const out = [el('h2', {}, 'Hottest keys')];
    for (const rule of view.board.rules) {
      const id = ruleId(rule);
      const denials = new Map(rule.denials.keys.map((k) => [k.tag, k.count]));
      const rows = rule.keys.keys.map((k) => {
        const points = history.map((frame) => (frame.keys[id] && frame.keys[id][k.tag]) || 0);
        return el('tr', { 'data-rule': id, 'data-tag': k.tag },
          el('td', { class: 'tag' }, k.tag), cell(view.revealed[k.tag] || ''), el('td', { class: 'n count' }, count(k.count)),
          el('td', { class: 'n denied' }, count(denials.get(k.tag) || 0)), el('td', { class: 'n rate' }, k.perSecond.toFixed(1)),
          el('td', {}, sparkline(points)));
      });
      const r = rule.rates;
      out.push(el('h3', { 'data-rule': id }, rule.rule + ' (' + rule.mode + ')'),
        el('p', { class: 'rule-line', 'data-rule': id },
          r.requests.toFixed(1) + ' req/s, ' + r.denied.toFixed(1) + ' denied/s, ' + r.shadowDenied.toFixed(1) + ' shadow denied/s; ' +
          count(rule.requests) + ' requests, ' + count(rule.denied) + ' denied. Each count within ±' + count(rule.keys.bound) +
          ' of the truth (N/k = ' + count(rule.keys.total) + '/' + rule.keys.capacity + ').'),
        table(['key (hashed tag)', 'who', 'requests', 'denied', 'req/s', 'recent req/s'], rows, { 'data-section': 'keys', 'data-rule': id }));
    }
    return out;
  }

  function shards(view) {
    const out = [el('h2', {}, 'Shard balance')];
    const s = view.shards;
    if (!s) return [...out, el('p', { id: 'shards' }, 'a single Redis: no shards')];
    const w = 420, h = 22, left = 170;
    const chart = shape('svg', { viewBox: '0 0 ' + (left + w + 70) + ' ' + (s.nodes.length * h + 8), width: left + w + 70,
      role: 'img', 'aria-label': 'Script calls by Cluster master' });
    s.nodes.forEach((n, i) => {
      const y = 4 + i * h;
      chart.append(shape('text', { x: left - 8, y: y + 15, 'text-anchor': 'end' }, n.node));
      chart.append(shape('rect', { x: left, y: y + 3, width: (n.share * w).toFixed(1), height: h - 6, fill: '#1f77b4', 'data-node': n.node, 'data-share': n.share.toFixed(4) }));
      chart.append(shape('text', { x: left + n.share * w + 6, y: y + 15 }, percent(n.share)));
    });
    const over = s.over === 'start' ? 'since each node started' : 'over the last interval';
    return [...out, el('p', { id: 'shards' }, 'Script calls ' + over + '; imbalance ' + s.imbalance.toFixed(2) + ' (busiest over mean).'), chart];
  }

  function render(data) {
    const view = data.view;
    const status = document.getElementById('status');
    status.className = '';
    status.textContent = 'updated ' + time(view.at) + ' from ' + view.source + ': ' + view.board.gateways.length + ' gateway(s)' +
      (view.board.mixed ? ', MIXED VERSIONS' : '') + (view.unreadable ? ', ' + view.unreadable + ' board(s) unreadable' : '');
    document.getElementById('main').replaceChildren(
      ...versions(view), ...heatMap(view), ...hotKeys(view, data.history), ...health(view), ...shards(view));
    document.body.dataset.at = String(view.at);
  }

  function refresh() {
    fetch('api/view', { headers: { authorization: 'Bearer ' + token }, cache: 'no-store' })
      .then((response) => {
        if (!response.ok) throw new Error(response.status === 401 ? 'the token was refused' : 'HTTP ' + response.status);
        return response.json();
      })
      .then(render)
      .catch((error) => {
        const status = document.getElementById('status');
        status.className = 'error';
        status.textContent = 'cannot read the board: ' + error.message;
      });
  }
  refresh();
  setInterval(refresh, INTERVAL);
})();
`;

/** The page, its style and script carrying `nonce` (the Content-Security-Policy allows only those). */
export function dashboardPage(nonce: string, intervalMs: number): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<title>sluice dashboard</title><style nonce="${nonce}">${STYLE}</style></head>
<body data-interval="${intervalMs}">
<h1>sluice dashboard</h1>
<p id="status">reading the board…</p>
<div id="main"></div>
<p>Keys are hashed counter tags; names come only from the app's reveal hook, when given.</p>
<script nonce="${nonce}">${SCRIPT}</script>
</body></html>
`;
}
