import type { Challenge } from './challenge.js';
import { SOLUTION_COOKIE } from './challengeFlow.js';

/*
 * The challenge page: a 429 for browsers (a request whose Accept names text/html) that solves the challenge
 * with WebCrypto's SHA-256, puts the solution in the `sluice_solution` cookie (the same `token:counter` the
 * Sluice-Solution header carries: the cookie is only its carrier, signed and single-use as the header's) and
 * loads the page again. The server answers that request with a pass cookie. WebCrypto is there on https and on
 * localhost; elsewhere the page says so.
 */

/** JSON for a script element: `<` escaped, so no value can close the element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

/** The page for a challenge of `rule`. */
export function challengePage(challenge: Challenge, rule: string): string {
  const data = scriptJson({
    token: challenge.token,
    difficulty: challenge.difficulty,
    cookie: SOLUTION_COOKIE,
    maxAge: Math.max(1, Math.floor((challenge.expiresAt - Date.now()) / 1000)),
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex">
<title>One moment</title></head>
<body><p id="sluice-status">Too many requests (${rule.replace(/[^a-z0-9_]/g, '')}). Checking your browser…</p>
<script>
(async () => {
  const c = ${data};
  const status = document.getElementById('sluice-status');
  if (!globalThis.crypto || !crypto.subtle) { status.textContent = 'This check needs a secure page (https).'; return; }
  const encoder = new TextEncoder();
  const zeroBits = (bytes) => {
    let bits = 0;
    for (const byte of bytes) { if (byte === 0) { bits += 8; continue; } return bits + Math.clz32(byte) - 24; }
    return bits;
  };
  for (let start = 0; ; start += 256) {
    const batch = [];
    for (let n = start; n < start + 256; n++)
      batch.push(crypto.subtle.digest('SHA-256', encoder.encode(c.token + ':' + n)).then((d) => [n, new Uint8Array(d)]));
    for (const [n, digest] of await Promise.all(batch)) {
      if (zeroBits(digest) >= c.difficulty) {
        document.cookie = c.cookie + '=' + encodeURIComponent(c.token + ':' + n) + '; Path=/; Max-Age=' + c.maxAge + '; SameSite=Lax';
        status.textContent = 'Done, loading…';
        location.reload();
        return;
      }
    }
  }
})();
</script></body></html>`;
}
