import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake model API: `POST /v1/chat/completions` streams `simulate_tokens` tokens (at most `max_tokens`) as
 * Server-Sent Events, one every `delay_ms`, then a final event with the `usage`, then `[DONE]`. The prompt
 * counts as 10 tokens.
 */
export const PROMPT_TOKENS = 10;

interface Ask {
  readonly max_tokens?: number;
  readonly simulate_tokens?: number;
  readonly delay_ms?: number;
}

export async function startUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', async () => {
      const ask = JSON.parse(raw || '{}') as Ask;
      const tokens = Math.min(ask.max_tokens ?? 1024, ask.simulate_tokens ?? 20);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < tokens && !res.destroyed; i++) {
        res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: `t${i} ` } }] })}\n\n`);
        await new Promise((resolve) => setTimeout(resolve, ask.delay_ms ?? 0));
      }
      const usage = {
        prompt_tokens: PROMPT_TOKENS,
        completion_tokens: tokens,
        total_tokens: PROMPT_TOKENS + tokens,
      };
      res.write(`data: ${JSON.stringify({ choices: [], usage })}\n\n`);
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
