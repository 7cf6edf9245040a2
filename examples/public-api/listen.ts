/** Where the example listens: PORT (default 3000) and HOST (default 127.0.0.1). */
export function listenAddress(env: NodeJS.ProcessEnv = process.env): { port: number; host: string } {
  return { port: Number(env.PORT ?? 3000), host: env.HOST ?? '127.0.0.1' };
}

/**
 * The one line to print when listening failed for a reason the user fixes with PORT or HOST (the port is
 * taken, or needs privileges); undefined for any other error, which is a bug worth its stack trace.
 */
export function listenProblem(error: unknown, address: { port: number; host: string }): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  const where = `${address.host}:${address.port}`;
  if (code === 'EADDRINUSE') {
    return `port ${address.port} is in use on ${address.host}: set PORT to a free one (PORT=3001 pnpm example) [EADDRINUSE]`;
  }
  if (code === 'EACCES') {
    return `no permission to listen on ${where}: set PORT to one above 1023 (PORT=3001 pnpm example) [EACCES]`;
  }
  if (code === 'EADDRNOTAVAIL') {
    return `${address.host} is not an address of this machine: set HOST (HOST=127.0.0.1 pnpm example) [EADDRNOTAVAIL]`;
  }
  return undefined;
}
