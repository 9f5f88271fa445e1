// Next.js calls register() once per server process: start the collector there, in the Node.js runtime only
// (the import sits behind the runtime check, as Next documents, so the Edge bundle never contains it).

export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME === 'nodejs') {
    const { startCollectorProcess } = await import('./instrumentation-node');
    await startCollectorProcess();
  }
}
