// Next.js calls register() once per server process: start the collector there, in the Node.js runtime only
// (the import sits behind the runtime check, as Next documents, so the Edge bundle never contains it).

export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME === 'nodejs') {
    // Requests Next would fail on or misread (malformed paths, TRACE, ?__proto__) are answered in front of it.
    (await import('./server/http/request-screen')).screenHttpServers();
    const { startCollectorProcess } = await import('./instrumentation-node');
    await startCollectorProcess();
  }
}
