// What this store wrote last of each pool, kept as shapes (a hash per row; see ./pack): an analysis that says the
// same as a pool's last state is not written again, and one that changes a few rows has only those serialised
// and written. The writer gives plain analyses; the store's format stays the store's.

import type { PoolDetail } from '@/lib/api-types';
import type { RowTable, StoredState } from './pack';
import { sameShape, shapeOf, toStore, type StoredShape } from './shape';

/** A state ready to write: its stored form, its shape, and what the rows it leaves out were written as. */
export interface Staged {
  /** Rows left out (null) are as the pool's stored state has them when its last change is `rowsAsOf`. */
  stored: StoredState;
  shape: StoredShape;
  rowsAsOf?: string;
  /** The keys of the rows stored as of `rowsAsOf`, per table (the store then counts them instead of reading them). */
  rowKeys?: Record<RowTable, ReadonlyMap<string, number>>;
}

export class LastWritten {
  private readonly shapes = new Map<string, { shape: StoredShape; at: string }>();
  /** Analyses found changed, by object: their write uses what the comparison computed. */
  private readonly staged = new WeakMap<PoolDetail, Staged>();

  /** Forgets everything, then remembers states read back from the store as the last written (a writer resuming). */
  resume(states: readonly PoolDetail[]): void {
    this.shapes.clear();
    for (const d of states)
      if (d.summary.lastChange) this.shapes.set(d.summary.key, { shape: shapeOf(d), at: d.summary.lastChange });
  }

  /**
   * Whether an analysis says what its pool's last written state says (nothing to write). When it does not, its
   * write is prepared. `previous` is the analysis last written, when the caller has it: drift items the new one
   * took over as they were (the same objects) are not hashed again.
   */
  same(d: PoolDetail, previous?: Pick<PoolDetail, 'drift'> | null): boolean {
    const before = this.shapes.get(d.summary.key);
    const { stored, shape } = toStore(d, before?.shape, previous);
    if (sameShape(before?.shape, shape, stored)) return true;
    this.staged.set(d, { stored, shape, ...(before ? { rowsAsOf: before.at, rowKeys: before.shape.tables } : {}) });
    return false;
  }

  /** The write prepared for an analysis by {@link same}, or its whole state. */
  take(d: PoolDetail): Staged {
    const s = this.staged.get(d);
    if (s) {
      this.staged.delete(d);
      return s;
    }
    return toStore(d, undefined);
  }

  /** Records the states a committed transaction wrote, each with its shape and when. */
  written(states: Iterable<readonly [key: string, shape: StoredShape, at: string]>): void {
    for (const [key, shape, at] of states) this.shapes.set(key, { shape, at });
  }

  forget(key: string): void {
    this.shapes.delete(key);
  }
}
