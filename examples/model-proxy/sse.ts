import type { RateLimitInfo } from '@sluice/core';

/** The completion request a client sends: OpenAI-style. */
export interface Completion {
  readonly max_tokens?: number;
  readonly [field: string]: unknown;
}

/** The default estimate when a request names no `max_tokens`. */
export const DEFAULT_MAX_TOKENS = 1024;

/** Asks the upstream for the completion as a stream of Server-Sent Events. */
export function askUpstream(
  upstreamUrl: string,
  body: Completion,
  signal: AbortSignal,
  peer = '',
): Promise<Response> {
  return fetch(`${upstreamUrl}/v1/chat/completions`, {
    method: 'POST',
    body: JSON.stringify({ ...body, stream: true }),
    headers: { 'content-type': 'application/json', 'x-forwarded-for': peer },
    signal,
  });
}

/**
 * Splits a stream of text into Server-Sent Events (without their blank-line ends). Read with a reader, not
 * `for await`: a program that also loads the DOM's types (some GraphQL servers' fetch polyfills do) types
 * ReadableStream without async iteration.
 */
export async function* events(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    pending += decoder.decode(read.value, { stream: true });
    let end = pending.indexOf('\n\n');
    while (end >= 0) {
      yield pending.slice(0, end);
      pending = pending.slice(end + 2);
      end = pending.indexOf('\n\n');
    }
  }
}

/** Meters one event: a token is reported with `used(1)`, the final `usage` settles the request. */
export async function meter(event: string, info: RateLimitInfo): Promise<void> {
  const data = event.startsWith('data: ') ? event.slice(6) : '';
  if (data === '' || data === '[DONE]') return;
  const parsed = JSON.parse(data) as { choices?: unknown[]; usage?: { total_tokens: number } };
  if (parsed.usage !== undefined) await info.settle?.(parsed.usage.total_tokens);
  else if ((parsed.choices?.length ?? 0) > 0) info.used?.(1);
}
