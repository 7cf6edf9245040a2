/**
 * One gateway process of bench/capacity-scale.ts: holds one client of each contender and, told over IPC, sends
 * requests through one of them: every key of a range once (the fill), or for some seconds Zipf-skewed over the
 * sliding active set, as fast as `inFlight` requests allow or at a fixed rate. Replies with what it counted.
 */
import {
  type Contender,
  type ContenderName,
  makeContender,
  type Outcome,
  type SluiceOptions,
  type Target,
} from './capacity-contenders.js';
import { histogram, record } from './histogram.js';
import { Population, type PopulationOptions } from './population.js';

/** What the bench tells a gateway. */
export type GatewayCommand =
  | {
      readonly type: 'setup';
      readonly target: Target;
      readonly contenders: readonly ContenderName[];
      readonly population: PopulationOptions;
      readonly searchShare: number;
      readonly sluice: SluiceOptions;
    }
  | {
      readonly type: 'fill';
      readonly contender: ContenderName;
      readonly from: number;
      readonly to: number;
      readonly inFlight: number;
    }
  | {
      readonly type: 'run';
      readonly contender: ContenderName;
      /** The population's clock: epoch ms at which the active set started sliding (the same in every gateway). */
      readonly t0: number;
      readonly seconds: number;
      /** Requests a second from this gateway; 0: as fast as `inFlight` requests in flight allow. */
      readonly rate: number;
      readonly inFlight: number;
    }
  | { readonly type: 'close' };

/** A gateway's count of one fill or run. */
export interface GatewayTally {
  requests: number;
  checks: number;
  denied: number;
  failedOpen: number;
  errors: number;
  commands: number;
  /** Requests a fixed-rate run did not send because this many were already waiting (the gateway fell behind). */
  skipped: number;
  wallMs: number;
  /** This process's CPU over the run, µs (user + system). */
  cpuUs: number;
  latency: number[];
}

/** The pause before a fill request that failed open is sent again. */
const RETRY_MS = 50;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Requests a fixed-rate run lets wait at once before it skips (a Redis that stopped answering). */
const MAX_WAITING = 20_000;

let contenders = new Map<ContenderName, Contender>();
let population: Population | undefined;
let searchShare = 0;

function newTally(): GatewayTally {
  return {
    requests: 0,
    checks: 0,
    denied: 0,
    failedOpen: 0,
    errors: 0,
    commands: 0,
    skipped: 0,
    wallMs: 0,
    cpuUs: 0,
    latency: histogram(),
  };
}

/** Sends one request and counts it. */
async function one(
  contender: Contender,
  tally: GatewayTally,
  key: number,
  search: boolean,
): Promise<Outcome> {
  const started = performance.now();
  let outcome: Outcome;
  try {
    outcome = await contender.request(key, search);
  } catch {
    outcome = { denied: false, failedOpen: false, error: true };
  }
  record(tally.latency, (performance.now() - started) * 1000);
  tally.requests += 1;
  tally.checks += search ? 2 : 1;
  if (outcome.denied) tally.denied += 1;
  if (outcome.failedOpen) tally.failedOpen += 1;
  if (outcome.error) tally.errors += 1;
  return outcome;
}

/** Runs `during` and fills in the tally's commands, wall time and CPU. */
async function measured(contender: Contender, during: (tally: GatewayTally) => Promise<void>) {
  const tally = newTally();
  const commands = contender.commandsSent();
  const cpu = process.cpuUsage();
  const started = performance.now();
  await during(tally);
  tally.wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  tally.cpuUs = used.user + used.system;
  tally.commands = contender.commandsSent() - commands;
  return tally;
}

function fill(contender: Contender, from: number, to: number, inFlight: number) {
  return measured(contender, async (tally) => {
    let next = from;
    const worker = async () => {
      while (next < to) {
        const key = next++;
        // A key whose request failed open was not written: it is sent again (after a pause, as the breaker's
        // cool-down would answer at once), so that every key of the range is in Redis when memory is read.
        while ((await one(contender, tally, key, false)).failedOpen) await sleep(RETRY_MS);
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
  });
}

function draw(t0: number): [number, boolean] {
  return [population!.draw(Date.now() - t0, Math.random()), Math.random() < searchShare];
}

function run(contender: Contender, command: Extract<GatewayCommand, { type: 'run' }>) {
  const end = Date.now() + command.seconds * 1000;
  return measured(contender, async (tally) => {
    if (command.rate === 0) {
      const worker = async () => {
        while (Date.now() < end) await one(contender, tally, ...draw(command.t0));
      };
      await Promise.all(Array.from({ length: command.inFlight }, worker));
      return;
    }
    // Open loop: every millisecond, the requests due by now at the rate, whether or not earlier ones answered.
    const started = performance.now();
    const waiting = new Set<Promise<void>>();
    let issued = 0;
    await new Promise<void>((resolve) => {
      const tick = () => {
        const due = Math.floor(((performance.now() - started) / 1000) * command.rate);
        for (; issued < due; issued++) {
          if (waiting.size >= MAX_WAITING) {
            tally.skipped += 1;
            continue;
          }
          const request = one(contender, tally, ...draw(command.t0)).then(() => {
            waiting.delete(request);
          });
          waiting.add(request);
        }
        if (Date.now() < end) setTimeout(tick, 1);
        else resolve();
      };
      tick();
    });
    await Promise.all(waiting);
  });
}

async function handle(command: GatewayCommand): Promise<unknown> {
  switch (command.type) {
    case 'setup': {
      population = new Population(command.population);
      searchShare = command.searchShare;
      const made = await Promise.all(
        command.contenders.map(
          async (name) =>
            [name, await makeContender(name, command.target, `cap-${name}`, command.sluice)] as const,
        ),
      );
      contenders = new Map(made);
      return { type: 'ready' };
    }
    case 'fill':
      return {
        type: 'tally',
        tally: await fill(contenders.get(command.contender)!, command.from, command.to, command.inFlight),
      };
    case 'run':
      return { type: 'tally', tally: await run(contenders.get(command.contender)!, command) };
    case 'close':
      for (const contender of contenders.values()) await contender.close();
      return { type: 'closed' };
  }
}

process.on('message', (command: GatewayCommand) => {
  handle(command).then(
    (reply) => {
      process.send?.(reply);
      if (command.type === 'close') process.disconnect();
    },
    (error: unknown) =>
      process.send?.({ type: 'error', error: error instanceof Error ? error.stack : String(error) }),
  );
});
