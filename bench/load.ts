/**
 * The load generator (a child of run.ts, pinned to the other CPU): runs autocannon jobs sent over IPC and
 * answers with their figures. Keys are made per request here, in autocannon's setupRequest.
 */
import autocannon from 'autocannon';
import { type LoadJob, type LoadResult, ROTATING_KEYS, type Scenario, TENANTS } from './lib/spec.js';

let sequence = 0;

/** The headers of the next request of a scenario. */
function keysFor(scenario: Scenario): Record<string, string> {
  if (scenario === 'hot') return { 'x-api-key': 'hot-key' };
  const n = sequence++ % ROTATING_KEYS;
  if (scenario === 'rotating' || scenario === 'user') return { 'x-api-key': `key-${n}` };
  return { 'x-api-key': `key-${n}`, 'x-tenant': `tenant-${n % TENANTS}` };
}

async function run(job: LoadJob): Promise<LoadResult> {
  const cpuBefore = process.cpuUsage();
  const result = await autocannon({
    url: job.url,
    connections: job.connections,
    pipelining: Number(process.env.BENCH_PIPELINING ?? 1),
    duration: job.durationS,
    ...(job.rate !== undefined ? { overallRate: job.rate } : {}),
    requests: [
      {
        method: 'GET',
        path: '/',
        setupRequest: (request) => ({
          ...request,
          headers: { ...request.headers, ...keysFor(job.scenario) },
        }),
      },
    ],
  });
  return {
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: result.duration,
    loadCpuMicros: cpuMicrosSince(cpuBefore),
  };
}

function cpuMicrosSince(before: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

process.on('message', (message: { id: number; job: LoadJob }) => {
  run(message.job).then(
    (result) => process.send?.({ id: message.id, result }),
    (error: unknown) => process.send?.({ id: message.id, error: String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));
