// How many lists run at once in this process: the lists of a whole fleet started together were the start-up
// peak of memory, so they take turns (every informer shares one gate unless given another).

/** At most `limit` lists at once; the others wait their turn in order. */
export class ListGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** The most lists that ran at once (for tests and benchmarks). */
  peak = 0;

  constructor(readonly limit: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    this.peak = Math.max(this.peak, this.running);
    try {
      return await fn();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

/** The gate every informer of this process shares unless given another. */
export const sharedListGate = new ListGate(6);
