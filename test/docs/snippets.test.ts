/**
 * Every snippet runs: each ```ts block of the site (docs/) and of every README is typechecked against the
 * workspace sources in one tsc run, and each one marked `run` (or `run=redis`) is run with tsx and must print
 * the ```text block that follows it. A failure names the Markdown file and line of the snippet.
 * Marks are listed in scripts/docs/snippets.ts.
 */
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../scripts/docs/options.js';
import { allSnippets, type Snippet } from '../../scripts/docs/snippets.js';
import { freePort, redisCli, startRedis } from '../support/redis.js';
import { HTTP_SESSION_MASKS, masked, transcriptSteps } from '../support/transcript.js';

const run = promisify(execFile);

/**
 * Pages being rewritten by issue 42's documentation work, whose snippet errors are shown, not failed on, until
 * they pass. Strict: a page listed here whose snippets all pass fails the test, so the list only shrinks.
 */
const PENDING = new Set<string>([]);
const snippets = allSnippets(ROOT);
const project = mkdtempSync(join(tmpdir(), 'sluice-snippets-'));

afterAll(() => rmSync(project, { recursive: true, force: true }));

/** The snippet's file in the temp project: named after where it is, so tsc's errors say it too. */
function fileOf(snippet: Snippet): string {
  return `${snippet.file.replace(/[^A-Za-z0-9]+/g, '_')}_L${snippet.line}.ts`;
}

/**
 * Every entry a package exports (`@sluice/nestjs/websocket` too), each to its source: the `types` of an export
 * (`./dist/websocket/index.d.ts`) read as `src/websocket/index.ts`. What users import, from the sources.
 */
function sourcePaths(): Record<string, string[]> {
  const paths: Record<string, string[]> = {};
  for (const name of readdirSync(join(ROOT, 'packages'))) {
    const manifest = join(ROOT, 'packages', name, 'package.json');
    if (!existsSync(manifest)) continue;
    const { name: pkg, exports = {} } = JSON.parse(readFileSync(manifest, 'utf8')) as {
      name: string;
      exports?: Record<string, { import?: { types?: string } }>;
    };
    for (const [subpath, target] of Object.entries(exports)) {
      const types = target.import?.types;
      if (types === undefined) continue;
      const source = join(
        ROOT,
        'packages',
        name,
        types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts'),
      );
      if (!existsSync(source)) throw new Error(`${pkg}: export ${subpath} has no source at ${source}`);
      paths[subpath === '.' ? pkg : `${pkg}/${subpath.slice(2)}`] = [source];
    }
  }
  return paths;
}

/**
 * The temp project: the root tsconfig's options, @sluice/* resolved to the workspace sources, the root's
 * node_modules, ESM like the repository; each snippet a module of its own. `experimentalDecorators` as every
 * NestJS app has it (`nest new` writes it; esbuild, under tsx, reads it too).
 */
function writeProject(): void {
  symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
  writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module', private: true }));
  mkdirSync(join(project, 'snippets'));
  const checked = snippets.filter((snippet) => !snippet.noCheck);
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.json'),
      compilerOptions: { noEmit: true, experimentalDecorators: true, paths: sourcePaths() },
      include: [],
      files: checked.map((snippet) => `snippets/${fileOf(snippet)}`),
    }),
  );
  for (const snippet of snippets) {
    // `export {}` keeps each snippet's names its own (and allows top-level await).
    writeFileSync(join(project, 'snippets', fileOf(snippet)), `${snippet.before}${snippet.code}export {};\n`);
  }
}

/** tsc's errors (`snippets/<file>.ts(3,7): error TS…`), each pointed at its Markdown file and line. */
function located(output: string): string[] {
  const byFile = new Map(snippets.map((snippet) => [fileOf(snippet), snippet]));
  const errors: string[] = [];
  for (const line of output.split('\n')) {
    const match = /^snippets\/([^()]+)\((\d+),(\d+)\): (error TS\d+: .*)$/.exec(line);
    if (match) {
      const [, file = '', row = '0', column, message] = match;
      const snippet = byFile.get(file);
      // Lines of the snippets a `continues` one goes on from are reported by those snippets themselves.
      const own = Number(row) - (snippet?.before.split('\n').length ?? 1) + 1;
      if (own < 1) {
        errors.push('');
        continue;
      }
      errors.push(`${snippet?.file}:${(snippet?.line ?? 0) + own - 1}:${column} ${message}`);
    } else if (line.startsWith(' ') && errors.length > 0) errors[errors.length - 1] += `\n${line}`;
    else if (line.trim() !== '') errors.push(line);
  }
  return errors;
}

/** One command of a getting-started page's session: `count` GETs of `path`, printing the bodies or (`head`) all. */
interface CurlStep {
  readonly command: string;
  readonly path: string;
  readonly count: number;
  readonly head: boolean;
}

/**
 * The curl commands of a page's ```console block, the two forms the getting-started pages use; any other line
 * starting with `$ ` fails, so that a page cannot show a command the test does not replay.
 */
function curlSteps(transcript: string): CurlStep[] {
  return transcriptSteps(transcript).map(({ command }) => {
    const loop = /^for i in ([\d ]+); do curl -s localhost:3000(\/\S*); echo; done$/.exec(command);
    if (loop) return { command, path: loop[2]!, count: loop[1]!.trim().split(/\s+/).length, head: false };
    const one = /^curl -si localhost:3000(\/\S*)$/.exec(command);
    if (one) return { command, path: one[1]!, count: 1, head: true };
    throw new Error(`a getting-started session runs a command the snippet test cannot replay: ${command}`);
  });
}

/**
 * Replays `steps` in the app's process as curl prints them (`-s`: the body; `-si`: the status line, the headers as
 * the server sent them, a blank line, the body) and prints the session as one JSON string. A refused connection
 * (the server not listening yet) is tried again: it counts nothing.
 */
function sessionDriver(port: number, steps: readonly CurlStep[]): string {
  return `
import { get as sessionGet } from 'node:http';
function sessionRequest(path: string): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    sessionGet({ host: '127.0.0.1', port: ${port}, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const fields: string[] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) fields.push(\`\${res.rawHeaders[i]}: \${res.rawHeaders[i + 1]}\\n\`);
        const head = \`HTTP/\${res.httpVersion} \${res.statusCode} \${res.statusMessage}\\n\${fields.join('')}\\n\`;
        resolve({ head, body: Buffer.concat(chunks).toString('utf8') });
      });
    }).on('error', reject);
  });
}
async function sessionAnswer(path: string): Promise<{ head: string; body: string }> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await sessionRequest(path);
    } catch (error) {
      if ((error as { code?: string }).code !== 'ECONNREFUSED' || attempt >= 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
let session = '';
for (const step of ${JSON.stringify(steps)}) {
  session += \`$ \${step.command}\\n\`;
  for (let i = 0; i < step.count; i++) {
    const { head, body } = await sessionAnswer(step.path);
    session += step.head ? \`\${head}\${body}\\n\` : \`\${body}\\n\`;
  }
}
console.log(JSON.stringify(session.trimEnd()));
process.exit(0); // a Redis client the app made would keep the process alive
`;
}

/** Asks `path` until the app refuses (at most 20 answers) and prints the statuses as JSON. */
function statusDriver(port: number, path: string): string {
  return `
const statuses: number[] = [];
for (let i = 0; i < 100 && statuses.length < 20 && !statuses.includes(429); i++) {
  try {
    statuses.push((await fetch('http://127.0.0.1:${port}${path}')).status);
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
console.log(JSON.stringify(statuses));
process.exit(0); // a Redis client the app made would keep the process alive
`;
}

/** A session with what changes from run to run written as placeholders: seconds to wait, date, length, ETag. */
function varying(session: string): string {
  return masked(session, HTTP_SESSION_MASKS);
}

describe('documentation snippets', () => {
  writeProject();

  it('finds the snippets of the site and of every README', () => {
    const files = new Set(snippets.map((snippet) => snippet.file));
    expect(files).toContain('packages/fastify/README.md');
    expect(snippets.length).toBeGreaterThan(40);
    const unchecked = snippets.filter((snippet) => snippet.noCheck);
    // The fragments left out of the typecheck, listed so that each stays a deliberate choice.
    console.log(
      `${snippets.length} snippets; not typechecked (no-check): ${unchecked.map((s) => `${s.file}:${s.line}`).join(', ') || 'none'}`,
    );
    expect(unchecked.length).toBeLessThanOrEqual(Math.ceil(snippets.length / 10));
  });

  it('typechecks every snippet against the workspace sources, in one tsc run', {
    timeout: 300_000,
  }, async () => {
    const tsc = join(ROOT, 'node_modules', '.bin', 'tsc');
    const result = await run(tsc, ['-p', 'tsconfig.json', '--pretty', 'false'], {
      cwd: project,
      maxBuffer: 16 * 1024 * 1024,
    }).then(
      () => '',
      (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
    );
    const errors = located(result).filter(Boolean);
    const pending = errors.filter((error) => PENDING.has(error.split(':')[0] ?? ''));
    if (pending.length > 0)
      console.warn(`snippets of pages being rewritten, failing:\n${pending.join('\n')}`);
    const passing = [...PENDING].filter((file) => !pending.some((error) => error.startsWith(`${file}:`)));
    expect(passing, 'pages whose snippets now pass: remove them from PENDING').toEqual([]);
    expect(errors.filter((error) => !pending.includes(error))).toEqual([]);
  });

  describe("the docs' apps under tsx (NestJS: esbuild's experimentalDecorators, no emitDecoratorMetadata)", () => {
    let redisUrl = '';
    let redisPort = 0;
    let stopRedis: (() => Promise<void>) | undefined;
    beforeAll(async () => {
      const redis = await startRedis();
      redisUrl = `redis://${redis.host}:${redis.port}`;
      redisPort = redis.port;
      stopRedis = () => redis.stop();
    });
    afterAll(() => stopRedis?.());

    /** Runs `code` (a snippet and a driver after it) with tsx in the temp project; the driver's line. */
    async function runWithTsx(name: string, code: string): Promise<string> {
      // Each app counts from nothing: the Redis pages share one server, and their keys would carry over.
      await redisCli(redisPort, 'FLUSHALL');
      mkdirSync(join(project, 'runs'), { recursive: true });
      // tsx applies a tsconfig only to the files it includes: the runs get their own, with the same options.
      writeFileSync(
        join(project, 'runs', 'tsconfig.json'),
        JSON.stringify({ extends: '../tsconfig.json', files: [], include: ['./*.ts'] }),
      );
      writeFileSync(join(project, 'runs', name), code);
      const { stdout } = await run(
        join(ROOT, 'node_modules', '.bin', 'tsx'),
        ['--tsconfig', 'runs/tsconfig.json', `runs/${name}`],
        { cwd: project, env: { ...process.env, REDIS_URL: redisUrl }, timeout: 60_000 },
      );
      // The driver's line is the last: an app may log its own before it (Nest's start-up lines).
      return stdout.trim().split('\n').at(-1) ?? '';
    }

    // The getting-started apps (docs/start/, and the NestJS README's), as written but on a free port: a first 429
    // on every framework, from the page a newcomer copies. A page's app gets the curl session the page shows,
    // replayed; the others are asked until they refuse.
    const LISTEN_3000 = /(\blisten\(\s*(?:\{\s*port:\s*)?|\bport:\s*)3000\b/g;
    const apps = snippets.filter(
      (snippet) =>
        (snippet.file.startsWith('docs/start/') || snippet.code.includes('NestFactory.create(AppModule')) &&
        snippet.code.match(LISTEN_3000) !== null,
    );
    it('finds an app on every getting-started page, and the NestJS gateway', () => {
      const files = new Set(apps.map((snippet) => snippet.file));
      for (const framework of ['fastify', 'express', 'koa', 'hono', 'nestjs'])
        expect(
          [...files].some((file) => file.includes(framework)),
          framework,
        ).toBe(true);
      expect(snippets.some((snippet) => snippet.code.includes('@WebSocketGateway('))).toBe(true);
    });
    it.each(apps.map((snippet) => [`${snippet.file}:${snippet.line}`, snippet] as const))(
      '%s answers 429 once over its limit (a getting-started page: the session it shows, replayed)',
      { timeout: 90_000 },
      async (where, snippet) => {
        const port = await freePort();
        const path = `/${/@Get\((?:'([^']*)')?\)/.exec(snippet.code)?.[1] ?? ''}`;
        const shown = snippet.file.startsWith('docs/start/') ? snippet.transcript : undefined;
        // Some apps listen without waiting (Express, Koa, Hono): the first requests may find no server yet.
        const driver = shown === undefined ? statusDriver(port, path) : sessionDriver(port, curlSteps(shown));
        const code = snippet.before + snippet.code.replace(LISTEN_3000, `$1${port}`) + driver;
        const printed = await runWithTsx(fileOf(snippet), code);
        if (shown === undefined) {
          const statuses = JSON.parse(printed) as number[];
          expect(statuses[0], where).toBe(200);
          expect(statuses.at(-1), where).toBe(429);
          return;
        }
        const session = JSON.parse(printed) as string;
        // What a page shows came from a run: the same commands print the same lines, but for the seconds to wait,
        // the date, the body's length and its ETag, which change from run to run.
        expect(varying(session), where).toBe(varying(shown.trimEnd()));
        // The seconds agree (`t` is the Retry-After on a 429) and stay within two windows, as the page says.
        const seconds = [...session.matchAll(/(?:\bt=|retry-after: |"retryAfter":)(\d+)/gi)].map((match) =>
          Number(match[1]),
        );
        expect(seconds.length, where).toBeGreaterThanOrEqual(3);
        expect(new Set(seconds).size, where).toBe(1);
        const window = Number(/;w=(\d+)/.exec(session)?.[1]);
        expect(seconds[0], where).toBeGreaterThan(0);
        expect(seconds[0], where).toBeLessThanOrEqual(2 * window);
      },
    );

    it("the README's first 429s are the getting-started pages' apps, and its session is Fastify's", () => {
      const started = apps.filter((snippet) => snippet.file.startsWith('docs/start/'));
      const readmeServers = snippets.filter(
        (snippet) => snippet.file === 'README.md' && snippet.code.match(LISTEN_3000) !== null,
      );
      expect(readmeServers.length).toBeGreaterThanOrEqual(6); // five frameworks, then the same on Redis
      for (const server of readmeServers)
        expect(
          started.some((snippet) => snippet.code === server.code),
          `README.md:${server.line} is a getting-started page's app, word for word`,
        ).toBe(true);
      const sessions = snippets.filter((snippet) => snippet.file === 'README.md' && snippet.transcript);
      expect(sessions.length).toBe(1);
      const fastify = started.find((snippet) => snippet.file === 'docs/start/fastify.md');
      expect(sessions[0]?.transcript).toBe(fastify?.transcript);
    });

    // `nest build` is tsc with the tsconfig `nest new` writes (decorator metadata emitted): the NestJS page's
    // first app, so compiled against the built packages as an app installs them, then run by Node.
    const nestApp = apps.find((snippet) => snippet.file === 'docs/start/nestjs.md');
    it('docs/start/nestjs.md, compiled as `nest build` does (emitDecoratorMetadata), answers 429', async () => {
      expect(nestApp).toBeDefined();
      const port = await freePort();
      const dir = join(project, 'nest-build');
      mkdirSync(join(dir, 'node_modules', '@sluice'), { recursive: true });
      for (const name of readdirSync(join(ROOT, 'packages')))
        symlinkSync(join(ROOT, 'packages', name), join(dir, 'node_modules', '@sluice', name), 'dir');
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'nodenext',
            moduleResolution: 'nodenext',
            target: 'ES2023',
            emitDecoratorMetadata: true,
            experimentalDecorators: true,
            skipLibCheck: true,
            strict: true,
            outDir: 'dist',
            types: ['node'],
            typeRoots: [join(ROOT, 'node_modules', '@types')],
          },
          files: ['main.ts'],
        }),
      );
      const driver = `
const statuses: number[] = [];
for (let i = 0; i < 20 && !statuses.includes(429); i++)
  statuses.push((await fetch('http://127.0.0.1:${port}/')).status);
console.log(JSON.stringify(statuses));
process.exit(0);
`;
      writeFileSync(join(dir, 'main.ts'), nestApp!.code.replace(LISTEN_3000, `$1${port}`) + driver);
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir, timeout: 120_000 });
      const compiled = readFileSync(join(dir, 'dist', 'main.js'), 'utf8');
      expect(compiled).toContain('design:paramtypes'); // the metadata `nest build` emits
      const { stdout } = await run(process.execPath, ['dist/main.js'], { cwd: dir, timeout: 60_000 });
      const statuses = JSON.parse(stdout.trim().split('\n').at(-1) ?? '[]') as number[];
      expect(statuses[0]).toBe(200);
      expect(statuses.at(-1)).toBe(429);
    }, 180_000);

    const gateways = snippets.filter((snippet) => snippet.code.includes('@WebSocketGateway('));
    it.each(gateways.map((snippet) => [`${snippet.file}:${snippet.line}`, snippet] as const))(
      '%s: the gateway limits messages (its service injected without metadata)',
      { timeout: 90_000 },
      async (where, snippet) => {
        const event = /@SubscribeMessage\('([^']+)'\)/.exec(snippet.code)?.[1];
        const path = /@WebSocketGateway\(\{ path: '([^']+)'/.exec(snippet.code)?.[1] ?? '/';
        const driver = `
import { NestFactory as SnippetNestFactory } from '@nestjs/core';
import { WsAdapter as SnippetWsAdapter } from '@nestjs/platform-ws';
import SnippetWebSocket from 'ws';
const snippetApp = await SnippetNestFactory.create(AppModule, { logger: false });
snippetApp.useWebSocketAdapter(new SnippetWsAdapter(snippetApp));
await snippetApp.listen(0, '127.0.0.1');
const socket = new SnippetWebSocket(\`ws://127.0.0.1:\${snippetApp.getHttpServer().address().port}${path}\`);
await new Promise((resolve) => socket.once('open', resolve));
const replies: string[] = [];
socket.on('message', (data) => replies.push(String(data)));
for (let i = 0; i < 50; i++) socket.send(JSON.stringify({ event: '${event}', data: \`m\${i}\` }));
await new Promise((resolve) => setTimeout(resolve, 1000));
console.log(JSON.stringify(replies.map((reply) => JSON.parse(reply).event)));
process.exit(0);
`;
        const events = JSON.parse(
          await runWithTsx(fileOf(snippet), snippet.before + snippet.code + driver),
        ) as string[];
        // Some messages echoed by the handler, the rest refused by the guard with Nest's exception frame.
        expect(events[0], where).not.toBe('exception');
        expect(events, where).toContain('exception');
        expect(events.length, where).toBe(50);
      },
    );
  });

  const runnable = snippets.filter((snippet) => snippet.run !== undefined);
  describe.runIf(runnable.length > 0)('run snippets', () => {
    it.each(runnable.map((snippet) => [`${snippet.file}:${snippet.line}`, snippet] as const))(
      '%s prints its ```text block',
      { timeout: 120_000 },
      async (_, snippet) => {
        const redis = snippet.run === 'redis' ? await startRedis() : undefined;
        try {
          const env = {
            ...process.env,
            ...(redis ? { REDIS_URL: `redis://${redis.host}:${redis.port}` } : {}),
          };
          const { stdout } = await run(
            join(ROOT, 'node_modules', '.bin', 'tsx'),
            ['--tsconfig', 'tsconfig.json', `snippets/${fileOf(snippet)}`],
            { cwd: project, env, timeout: 60_000 },
          );
          expect(stdout.trimEnd(), `${snippet.file}:${snippet.line}`).toBe(snippet.expected?.trimEnd());
        } finally {
          await redis?.stop();
        }
      },
    );
  });
});
