import { formatTable } from '../commands/report.js';
import type { Io } from '../io.js';
import { formatBytes } from './bytes.js';
import type { CapacityEstimate } from './estimate.js';
import { BAN_STATE_BYTES, CAPACITY_RUN, COALESCED_CALLS_PER_REQUEST, MARKER_BYTES } from './figures.js';
import type { MeasuredRun } from './measure.js';

const int = (n: number) => Math.round(n).toLocaleString('en');
const fixed = (n: number, digits = 1) => n.toFixed(digits);

/** The estimate as text: per rule, then the totals an operator sizes Redis with. */
export function printEstimate(io: Io, e: CapacityEstimate, shardMemory: number, cpuShare: number): void {
  if (e.skipped.length > 0)
    io.out(
      `left out (scope: local, deny or allow rules that count nothing, or not matching the descriptors given): ${e.skipped.join(', ')}`,
    );
  const rows = e.rules.map((r) => [
    r.rule,
    r.algorithm,
    int(r.redisKeys),
    int(r.bytesPerKey),
    formatBytes(r.memoryBytes),
    fixed(r.usPerCheck),
    fixed(r.perKeyPerSecond, 2),
  ]);
  for (const line of formatTable([
    ['rule', 'algorithm', 'keys', 'B/key', 'memory', 'µs/check', 'per key/s'],
    ...rows,
  ]))
    io.out(`  ${line}`);
  for (const r of e.rules) {
    const extra = policyKeys(r.banKeys, r.markerKeys);
    if (extra !== undefined) io.out(`  ${r.rule} also holds ${extra}`);
  }
  io.out('');
  const lines: [string, string][] = [
    [
      'Redis keys',
      `${int(e.redisKeys)} over ${int(e.tags)} hash tags: ${fixed(e.keysPerSlot)} keys per slot on a Cluster`,
    ],
    ['memory', `${formatBytes(e.memoryBytes)} (used_memory growth at the measured bytes per key)`],
    [
      'script calls',
      `${int(e.callsPerSecond)}/s at most on one Redis (one per request; coalescing sends fewer), ${int(e.clusterCallsPerSecond)}/s on a Cluster (one per slot group)`,
    ],
    [
      'script time',
      `${fixed(e.scriptUsPerRequest)} µs per request: ${fixed(e.scriptCoresBusy, 2)} of a core`,
    ],
    [
      'Redis CPU',
      `${fixed(e.redisCpu.coalesced)} µs per request on one server, calls coalesced (${fixed(e.redisCores.coalesced, 2)} of a core); ` +
        `${fixed(e.redisCpu.uncoalesced)} at one call per request (${fixed(e.redisCores.uncoalesced, 2)}); ` +
        `${fixed(e.redisCpu.cluster)} on a Cluster, one call per slot group (${fixed(e.redisCores.cluster, 2)} of a core in all)`,
    ],
    [
      'primaries',
      `${e.shardsNeeded} (CPU: ${e.shardsByCpu} at ${Math.round(cpuShare * 100)}% of a core each; memory: ${e.shardsByMemory} at ${formatBytes(shardMemory)} each)`,
    ],
  ];
  for (const line of formatTable(lines)) io.out(line);
  io.out(
    `Redis CPU is extrapolated, linear in the rate, from the server CPU per check and per call measured in ${CAPACITY_RUN} ` +
      `(coalesced: ${COALESCED_CALLS_PER_REQUEST} calls per request, as measured there; a gateway with fewer requests in flight sends more); ` +
      "other algorithms than the run's are scaled by their script time. Memory and script time per check are bench/redis-ops.ts's.",
  );
  for (const hot of e.hotKeys) {
    io.out(
      `hot key: ${hot.rule} takes ${int(hot.perSecond)} increments/s on one key; split it with shards: ${hot.shards}`,
    );
  }
}

/** A rule's ban state and marker keys in words (`100,000 ban state keys (225 B each)`), undefined for none. */
function policyKeys(banKeys: number, markerKeys: number): string | undefined {
  const parts: string[] = [];
  if (banKeys > 0) parts.push(`${int(banKeys)} ban state keys (${BAN_STATE_BYTES} B each)`);
  if (markerKeys > 0) parts.push(`${int(markerKeys)} idempotency markers (${MARKER_BYTES} B each)`);
  return parts.length === 0 ? undefined : `up to ${parts.join(' and ')}, in memory and keys below`;
}

/** The measured run beside the estimate for the same keys. */
export function printMeasured(io: Io, estimate: CapacityEstimate, run: MeasuredRun): void {
  const perRequest = run.scriptUs / run.requests;
  const ratio = (measured: number, estimated: number) =>
    estimated === 0 ? '' : fixed(measured / estimated, 2);
  const rows = [
    ['', 'estimated', 'measured', 'measured/estimated'],
    ['Redis keys', int(estimate.redisKeys), int(run.redisKeys), ratio(run.redisKeys, estimate.redisKeys)],
    [
      'memory',
      formatBytes(estimate.memoryBytes),
      formatBytes(run.memoryBytes),
      ratio(run.memoryBytes, estimate.memoryBytes),
    ],
    [
      'script µs per request',
      fixed(estimate.scriptUsPerRequest),
      fixed(perRequest),
      ratio(perRequest, estimate.scriptUsPerRequest),
    ],
    ['script calls per request', '<= 1', fixed(run.calls / run.requests, 3), ''],
    [
      'Redis CPU µs per request',
      fixed(estimate.redisCpu.coalesced),
      fixed(run.cpuUs / run.requests),
      ratio(run.cpuUs / run.requests, estimate.redisCpu.coalesced),
    ],
  ];
  for (const line of formatTable(rows)) io.out(`  ${line}`);
}
