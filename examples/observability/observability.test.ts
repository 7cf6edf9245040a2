/**
 * The alert rules and the dashboard against what prometheusObserver really exports: their structure, and every
 * metric, label and outcome value they use (which promtool cannot check), and `promtool check rules` where
 * promtool is installed (.ci/run installs Debian's prometheus package for it).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { compileRules, createLimiter, MemoryStore, type Store } from '@sluice/core';
import { prometheusObserver } from '@sluice/prometheus';
import { beforeAll, describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';

const DIR = new URL('./', import.meta.url);
const OUTCOMES = ['allowed', 'denied', 'shadow_denied', 'failed_open'];
const PROM_DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;

const ruleFile = z.strictObject({
  groups: z.array(
    z.strictObject({
      name: z.string().min(1),
      interval: z.string().regex(PROM_DURATION).optional(),
      rules: z.array(
        z.strictObject({
          alert: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/),
          expr: z.string().min(1),
          for: z.string().regex(PROM_DURATION).optional(),
          labels: z.strictObject({ severity: z.enum(['critical', 'warning', 'info']) }),
          annotations: z.strictObject({ summary: z.string().min(1), description: z.string().min(1) }),
        }),
      ),
    }),
  ),
});

/** Exported series names (histograms as _bucket, _sum, _count) and the label names each carries. */
let exported: Map<string, Set<string>>;

/** Drives a limiter through every outcome, then reads the metrics text as Prometheus would scrape it. */
async function scrapeAfterTraffic(): Promise<string> {
  const store = new MemoryStore({ maxKeys: 3 }); // the three counters of one key: another key evicts
  const observer = prometheusObserver({ stores: { memory: store } });
  const rules = compileRules({
    domain: 'alerts',
    rules: [
      { name: 'per_key', key: ['api_key'], limit: { requests: 1, per: '60s' }, review: '2020-01-01' },
      { name: 'shadowed', key: ['api_key'], limit: { requests: 1, per: '60s' }, mode: 'shadow' },
      { name: 'leases', key: ['api_key'], algorithm: 'concurrency', limit: { concurrent: 5, lease: '60s' } },
    ],
  });
  const limiter = createLimiter({ rules, observer, store });
  await limiter.check({ api_key: 'k' });
  await limiter.check({ api_key: 'k' });
  await limiter.check({ api_key: 'other' }); // an eviction
  const failing: Store = {
    evaluate: () => Promise.reject(new Error('down')),
    release: async () => {},
    close: async () => {},
  };
  await createLimiter({ rules, observer, store: failing }).check({ api_key: 'k' });
  observer.onStoreLatency?.(0.002);
  observer.onRulesError?.(new Error('bad'));
  return observer.metrics();
}

function parseExposition(text: string): Map<string, Set<string>> {
  const series = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const found = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? /.exec(line);
    if (!found?.[1]) continue;
    const labels = series.get(found[1]) ?? new Set<string>();
    for (const pair of (found[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) labels.add(pair[1]!);
    series.set(found[1], labels);
  }
  return series;
}

/** Every `metric{label op "value", ...}` or bare `metric` in a PromQL expression. */
function selectors(expr: string): { metric: string; matchers: [string, string][] }[] {
  return [...expr.matchAll(/\b(sluice_[a-z_]+)\b(\{[^}]*\})?/g)].map((m) => ({
    metric: m[1]!,
    matchers: [...(m[2] ?? '').matchAll(/([a-z_]+)\s*=~?\s*"([^"]*)"/g)].map((p) => [p[1]!, p[2]!]),
  }));
}

function checkExpression(expr: string): void {
  let depth = 0;
  for (const c of expr) {
    depth += c === '(' ? 1 : c === ')' ? -1 : 0;
    expect(depth).toBeGreaterThanOrEqual(0);
  }
  expect(depth).toBe(0);
  const used = selectors(expr);
  expect(used.length).toBeGreaterThan(0);
  for (const { metric, matchers } of used) {
    expect([...exported.keys()], `${metric} in ${expr}`).toContain(metric);
    for (const [label, value] of matchers) {
      expect([...(exported.get(metric) ?? [])], `label ${label} of ${metric}`).toContain(label);
      if (label === 'outcome') expect(OUTCOMES).toContain(value);
    }
  }
  // Labels grouped by must exist on a metric the expression reads.
  for (const group of expr.matchAll(/\bby \(([^)]*)\)/g)) {
    for (const label of group[1]!.split(',').map((l) => l.trim())) {
      expect(
        used.some(({ metric }) => exported.get(metric)?.has(label)),
        `by (${label}) in ${expr}`,
      ).toBe(true);
    }
  }
}

beforeAll(async () => {
  exported = parseExposition(await scrapeAfterTraffic());
});

describe('alerts.yml', () => {
  const file = ruleFile.parse(parse(readFileSync(new URL('alerts.yml', DIR), 'utf8')));
  const alerts = file.groups.flatMap((g) => g.rules);

  test('is a valid Prometheus rule file with unique alert names', () => {
    expect(alerts.length).toBeGreaterThanOrEqual(4);
    expect(new Set(alerts.map((a) => a.alert)).size).toBe(alerts.length);
  });

  test('covers 429 rate, store errors, mixed rules versions and overdue reviews', () => {
    const exprOf = (name: string) => alerts.find((a) => a.alert === name)?.expr ?? '';
    expect(exprOf('SluiceHighDenialRate')).toContain('sluice_decisions_total{outcome="denied"}');
    expect(exprOf('SluiceStoreErrors')).toContain('sluice_store_errors_total');
    expect(exprOf('SluiceMixedRulesVersions')).toMatch(/count by \(domain\) \(count by \(domain, version\)/);
    expect(alerts.find((a) => a.alert === 'SluiceMixedRulesVersions')?.for).toBe('5m');
    expect(exprOf('SluiceRuleReviewOverdue')).toContain('sluice_rule_review_overdue');
  });

  test('every metric, label and outcome it uses is exported by prometheusObserver', () => {
    for (const alert of alerts) checkExpression(alert.expr);
  });

  const promtool = spawnSync('promtool', ['--version']).status === 0;
  test.skipIf(!promtool)('passes promtool check rules', () => {
    const out = execFileSync('promtool', ['check', 'rules', new URL('alerts.yml', DIR).pathname], {
      encoding: 'utf8',
    });
    expect(out).toContain(`SUCCESS: ${alerts.length} rules found`);
  });
});

describe('grafana-dashboard.json', () => {
  const dashboard = JSON.parse(readFileSync(new URL('grafana-dashboard.json', DIR), 'utf8')) as {
    title: string;
    uid: string;
    panels: { id: number; title: string; gridPos: object; targets: { expr: string }[] }[];
  };

  test('has titled panels with unique ids and positions', () => {
    expect(dashboard.title).toBeTruthy();
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    for (const panel of dashboard.panels) {
      expect(panel.title).toBeTruthy();
      expect(panel.gridPos).toMatchObject({ w: expect.any(Number), h: expect.any(Number) });
      expect(panel.targets.length).toBeGreaterThan(0);
    }
  });

  test('every query uses exported metrics and labels', () => {
    const queries = dashboard.panels.flatMap((p) =>
      p.targets.map((t) => t.expr.replaceAll('$__rate_interval', '5m')),
    );
    for (const expr of queries) checkExpression(expr.replaceAll('"$rule"', '".*"'));
    const all = queries.join('\n');
    for (const metric of ['decisions_total', 'store_duration_seconds', 'rules_info', 'concurrency_active']) {
      expect(all).toContain(`sluice_${metric}`);
    }
  });
});
