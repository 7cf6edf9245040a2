/**
 * How a client should back off, in three languages: retry on 429 and 503 only, wait what Retry-After says (or,
 * without it, a doubling wait), and add jitter so that clients told the same second do not all come back in it.
 * test/ops/public-docs.test.ts runs each against a server that answers 429 first.
 */

/** One example: its language (as a fence names it) and its code, runnable as it stands. */
export interface BackoffExample {
  readonly title: string;
  readonly language: 'sh' | 'js' | 'python';
  readonly code: string;
}

/** The share of the wait added at random, at most: 25%. */
export const JITTER_SHARE = 0.25;

/** The examples for a request to `url`. */
export function backoffExamples(url: string): BackoffExample[] {
  const quoted = JSON.stringify(url);
  return [
    {
      title: 'curl',
      language: 'sh',
      code: `# Up to 5 tries: on 429 or 503, wait Retry-After seconds (else 2, 4, 8...) plus up to 25% at random.
for attempt in 1 2 3 4 5; do
  status=$(curl -s -o body.json -D headers.txt -w '%{http_code}' '${url}')
  if [ "$status" != 429 ] && [ "$status" != 503 ]; then break; fi
  wait=$(awk 'tolower($1) == "retry-after:" { print $2 + 0 }' headers.txt)
  sleep "$(awk -v w="\${wait:-$((2 ** attempt))}" 'BEGIN { srand(); print w * (1 + rand() * ${JITTER_SHARE}) }')"
done
echo "$status"`,
    },
    {
      title: 'JavaScript (Node.js 18+, browsers)',
      language: 'js',
      code: `// Up to 5 tries: on 429 or 503, wait Retry-After seconds (else 2, 4, 8...) plus up to 25% at random.
async function fetchWithBackoff(url, init = {}, tries = 5) {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(url, init);
    if ((response.status !== 429 && response.status !== 503) || attempt === tries) return response;
    const retryAfter = Number(response.headers.get('Retry-After'));
    const seconds = retryAfter > 0 ? retryAfter : 2 ** attempt;
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000 * (1 + Math.random() * ${JITTER_SHARE})));
  }
}

const response = await fetchWithBackoff(${quoted});
console.log(response.status);`,
    },
    {
      title: 'Python 3 (standard library)',
      language: 'python',
      code: `# Up to 5 tries: on 429 or 503, wait Retry-After seconds (else 2, 4, 8...) plus up to 25% at random.
import random, time, urllib.error, urllib.request

def fetch_with_backoff(url, tries=5):
    for attempt in range(1, tries + 1):
        try:
            with urllib.request.urlopen(url) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            if error.code not in (429, 503) or attempt == tries:
                raise
            retry_after = error.headers.get("Retry-After", "")
            seconds = int(retry_after) if retry_after.isdigit() else 2 ** attempt
            time.sleep(seconds * (1 + random.random() * ${JITTER_SHARE}))

status, body = fetch_with_backoff(${quoted})
print(status)`,
    },
  ];
}
