import type { MergedKey, MergedRule, MergedSketch } from '@sluice/core';
import type { FleetView } from './view.js';

const count = (n: number) => Math.round(n).toLocaleString('en-US');
const rate = (n: number) => n.toFixed(1);
const time = (ms: number) => new Date(ms).toISOString().slice(11, 19);

/** `text` cut or padded to `width` (a cut ends with `…`). */
function fit(text: string, width: number, right = false): string {
  const cut = text.length > width ? `${text.slice(0, width - 1)}…` : text;
  return right ? cut.padStart(width) : cut.padEnd(width);
}

/** The rules versions per domain, mixed ones flagged, and each gateway's store. */
function fleetLines(view: FleetView): string[] {
  const { board } = view;
  const lines = board.domains.map((d) => {
    const runs = d.versions.map((v) => `${v.version} on ${v.gateways.join(', ')}`).join('; ');
    return `${d.mixed ? 'MIXED  ' : 'rules  '}${d.domain || '(no domain)'}: ${runs}`;
  });
  for (const gateway of board.gateways) {
    const { store } = gateway;
    const state = store.connected
      ? store.breaker === 'closed'
        ? 'connected'
        : `breaker ${store.breaker}`
      : 'DOWN';
    const timing =
      store.meanMs === null
        ? 'no store call timed in the last interval'
        : `${store.meanMs.toFixed(2)} ms mean, ${store.maxMs!.toFixed(2)} ms max`;
    const failing =
      store.failingOpenSince === null ? '' : `, failing open since ${time(store.failingOpenSince)}`;
    lines.push(
      `store  ${fit(gateway.gateway, 24)} ${state}, ${timing}, ${store.errors} errors${failing} (board at ${time(gateway.at)})`,
    );
  }
  return lines;
}

function shardLines(view: FleetView): string[] {
  const shards = view.shards;
  if (shards === undefined) return [];
  const over = shards.over === 'start' ? 'since each node started' : 'since the last read';
  const parts = shards.nodes.map((n) => `${n.node} ${(n.share * 100).toFixed(1)}%`);
  return [
    `shards script calls ${over}: ${parts.join('  ')}; imbalance ${shards.imbalance.toFixed(2)} (busiest/mean)`,
  ];
}

function keyLines(title: string, sketch: MergedSketch, view: FleetView, denials: boolean): string[] {
  if (sketch.keys.length === 0) return [];
  const lines = [
    `  ${fit(title, 24)} ${fit('who', 14)} ${fit('per s', 9, true)} ${fit(denials ? 'denials' : 'requests', 12, true)}   (each within ±${count(sketch.bound)})`,
  ];
  for (const key of sketch.keys) lines.push(keyLine(key, view));
  return lines;
}

function keyLine(key: MergedKey, view: FleetView): string {
  const who = view.revealed[key.tag] ?? '';
  return `  ${fit(key.tag, 24)} ${fit(who, 14)} ${fit(rate(key.perSecond), 9, true)} ${fit(count(key.count), 12, true)}`;
}

function ruleLines(rule: MergedRule, view: FleetView): string[] {
  const versions = rule.versions.map((v) => v.version).join(' / ');
  const flag = rule.mixed
    ? `  MIXED VERSIONS: ${rule.versions.map((v) => `${v.version} on ${v.gateways.join(', ')}`).join('; ')}`
    : '';
  const { rates, keys } = rule;
  return [
    '',
    `${rule.rule} (${rule.mode}, version ${versions}, ${rule.domain})${flag}`,
    `  ${rate(rates.requests)} req/s, ${rate(rates.denied)} denied/s, ${rate(rates.shadowDenied)} shadow denied/s; ` +
      `${count(rule.requests)} requests, ${count(rule.denied)} denied, ${count(rule.shadowDenied)} shadow denied, ` +
      `${count(rule.failedOpen)} failed open`,
    `  counts within ±${count(keys.bound)} of the truth (N/k = ${count(keys.total)}/${keys.capacity} = ${count(keys.capacity === 0 ? 0 : keys.total / keys.capacity)})`,
    ...keyLines('hottest keys (tag)', keys, view, false),
    ...keyLines('most denied keys (tag)', rule.denials, view, true),
  ];
}

/** One frame of `sluice top`, as lines. */
export function renderFrame(view: FleetView): string[] {
  const { board } = view;
  const head = `sluice top  ${view.source}  ${new Date(view.at).toISOString().slice(0, 19)}Z  ${board.gateways.length} gateway(s)`;
  if (board.gateways.length === 0)
    return [
      head,
      'no gateway has published a board: start them with watch: {publish: true} (docs/guide/watching.md)',
    ];
  const unreadable = view.unreadable > 0 ? [`(${view.unreadable} board(s) of another format skipped)`] : [];
  return [
    head,
    ...fleetLines(view),
    ...shardLines(view),
    ...unreadable,
    ...board.rules.flatMap((r) => ruleLines(r, view)),
  ];
}
