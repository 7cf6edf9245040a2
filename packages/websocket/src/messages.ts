import type { CompiledRules, Limiter } from '@sluice/core';

import type { WebSocket } from 'ws';

/** Close code of a connection closed for a message over a limit (`refuse: 'close'`): "try again later". */
export const CLOSE_RATE_LIMITED = 4029;
/** Close code of a connection closed at `maxDurationMs`. */
export const CLOSE_MAX_DURATION = 4030;

/** How a message over a limit is refused: an error frame (the connection stays) or closing the connection. */
export type Refusal = 'error' | 'close';

/** What a message counts as: its descriptors (`channel`, `event`, ...) and its cost (say, its size in bytes). */
export interface MessageFacts {
  readonly descriptors?: Readonly<Record<string, string | undefined>>;
  readonly cost?: number;
}

/** The error frame a refused message gets (`refuse: 'error'`), as JSON text. */
export interface RefusedFrame {
  readonly type: 'rate_limited';
  readonly rule: string | null;
  /** ms until the message would be admitted; null when never (a cost above the limit). */
  readonly retryAfterMs: number | null;
}

/** A connection's message limits: the rules, the connection's own descriptors and how to refuse. */
export interface MessageGate {
  readonly limiter: Limiter;
  readonly rules: CompiledRules;
  readonly base: Readonly<Record<string, string | undefined>>;
  readonly refusalOf: (rule: string | undefined) => Refusal;
  readonly report: (error: unknown) => void;
  /** The last message's delivery: messages are decided at once but delivered or refused in arrival order. */
  tail: Promise<void>;
}

type Decision = Awaited<ReturnType<Limiter['check']>>;

/**
 * Decides one message against the message rules alone (not the upgrade's), with the connection's descriptors
 * and the message's own. Undefined when the limiter failed (reported): the message is let through.
 */
export async function decideMessage(gate: MessageGate, facts: MessageFacts): Promise<Decision | undefined> {
  try {
    const decision = await gate.limiter.check(
      { ...gate.base, ...facts.descriptors },
      { global: false, rules: gate.rules, ...(facts.cost === undefined ? {} : { cost: facts.cost }) },
    );
    // A message holds nothing past its decision: anything a rule leased goes back at once.
    if (decision.leases.length > 0) void gate.limiter.release(decision);
    return decision;
  } catch (error) {
    gate.report(error);
    return undefined;
  }
}

/** Refuses a message over a limit: an error frame, or the connection closed, per the denying rule's refusal. */
export function refuseMessage(gate: MessageGate, ws: WebSocket, decision: Decision): void {
  const retry = retryMs(decision.retryAfterMs);
  if (gate.refusalOf(decision.rule) === 'close') closeRateLimited(ws, decision);
  else if (ws.readyState === ws.OPEN) {
    const frame: RefusedFrame = { type: 'rate_limited', rule: decision.rule ?? null, retryAfterMs: retry };
    ws.send(JSON.stringify(frame));
  }
}

/** Closes a connection with 4029 and a reason naming the rule and the retry time. */
export function closeRateLimited(ws: WebSocket, decision: Decision): void {
  const retry = retryMs(decision.retryAfterMs);
  const seconds = retry === null ? 'never' : `${Math.ceil(retry / 1000)}s`;
  // A close reason is at most 123 bytes.
  ws.close(
    CLOSE_RATE_LIMITED,
    `rate limited by ${decision.rule ?? 'a rule'}; retry after ${seconds}`.slice(0, 120),
  );
}

/** ms until a refused message would fit; null when never (a cost above the limit). */
export const retryMs = (ms: number): number | null => (Number.isFinite(ms) ? Math.ceil(ms) : null);
