/** Where the example listens: PORT (default 3000) and HOST (default 127.0.0.1). */
export function listenAddress(env: NodeJS.ProcessEnv = process.env): ListenTarget {
  return { port: Number(env.PORT ?? 3000), host: env.HOST ?? '127.0.0.1' };
}

/** Where an example listens. */
export interface ListenTarget {
  readonly port: number;
  readonly host: string;
}

/**
 * The one line to print when listening failed for a reason the user fixes with PORT or HOST (the port is
 * taken, or needs privileges); undefined for any other error, which is a bug worth its stack trace.
 */
export function listenProblem(
  error: unknown,
  address: ListenTarget,
  command = 'pnpm example',
): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  const where = `${address.host}:${address.port}`;
  if (code === 'EADDRINUSE') {
    return `port ${address.port} is in use on ${address.host}: set PORT to a free one (PORT=3001 ${command}) [EADDRINUSE]`;
  }
  if (code === 'EACCES') {
    return `no permission to listen on ${where}: set PORT to one above 1023 (PORT=3001 ${command}) [EACCES]`;
  }
  if (code === 'EADDRNOTAVAIL') {
    return `${address.host} is not an address of this machine: set HOST (HOST=127.0.0.1 ${command}) [EADDRNOTAVAIL]`;
  }
  return undefined;
}

/**
 * An example that could not listen: for a problem {@link listenProblem} explains, one line `<name>: <problem>`
 * on stderr and exit code 1 (the caller then closes what it opened); any other error is thrown on, a bug.
 */
export function failedToListen(name: string, error: unknown, address: ListenTarget, command?: string): void {
  const problem = listenProblem(error, address, command);
  if (problem === undefined) throw error;
  console.error(`${name}: ${problem}`);
  process.exitCode = 1;
}
