// Next.js calls register() once per server process: start the collector there, in the Node.js runtime only.
// A configuration error stops start-up with its message (no stack trace).

export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  const { runtime } = await import('./server/collector/start');
  const { ConfigError } = await import('./server/env');
  try {
    await runtime();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(1);
    }
    throw e;
  }
}
