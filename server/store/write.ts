// The store's write path: a collector cycle's pool states and transitions in one transaction, each state as a
// history row (a keyframe, or a patch of the state before) and as the pool's current state (its rows kept apart,
// only those that changed written); and the entries and Azure read times written outside a cycle.
// ~550 lines in one file: a state's write is one sequence (the pool's row read; changed rows or whole tables; the
// diff; keyframe or patch; the row saved; the rows apart written) whose steps share that row and the counters.

import { goneSince, type PoolDetail, type PoolSummary, type TimelineEntry } from '@/lib/api-types';
import {
  diffChangedRows,
  diffHistory,
  diffStoredRows,
  type HistoryPatch,
  type RowChange,
  type RowsText,
} from './history-patch';
import { LastWritten, type Staged } from './last-written';
import {
  apartRows,
  keptApart,
  rowCounts,
  ROW_COUNT_COLUMN,
  TABLES_APART,
  WHOLE,
  type HistoryKind,
  type PoolRow,
  type TableRow,
} from './layout';
import {
  completeStored,
  deflateDoc,
  deflateIfShorter,
  inflateDoc,
  leavesOut,
  ROW_TABLES,
  splitStored,
  storedState,
  storedText,
  type RowTable,
  type StoredRows,
  type StoredState,
} from './pack';
import type { StoredShape } from './shape';
import { CHANGE_CHANNEL, type PoolWrite, type SqlDb, type StoreOptions, type WriteStats } from './types';

const noWrites = (): WriteStats => ({
  states: 0,
  changedRows: 0,
  wholeTables: 0,
  keyframes: 0,
  patches: 0,
  historyBytes: 0,
  rowsRead: 0,
  rowsWritten: 0,
  transitions: 0,
});

/** PostgreSQL refuses a NOTIFY payload of 8,000 bytes or more, and with it the transaction that sends it. */
const NOTICE_MAX_BYTES = 7_000;

/**
 * A change notice's payload: the pool, the instant and the fields that changed, as many of the fields as fit
 * under NOTICE_MAX_BYTES (a field can name an Event's reason, which a cluster chooses). A listener needs the
 * pool; the fields only say what changed.
 */
function changeNotice(poolKey: string, at: string, entries: readonly { field: string }[]): string {
  const fields: string[] = [];
  let bytes = Buffer.byteLength(JSON.stringify({ poolKey, at, fields }));
  for (const f of new Set(entries.map((e) => e.field))) {
    bytes += Buffer.byteLength(JSON.stringify(f)) + 1;
    if (bytes > NOTICE_MAX_BYTES) break;
    fields.push(f);
  }
  return JSON.stringify({ poolKey, at, fields });
}

/**
 * A new keyframe once the patches since the last one weigh this many times as much as it does, or after
 * {@link MAX_PATCHES_PER_KEYFRAME} patches. History then costs its patches and a fourth. (A keyframe each time
 * the patches weighed as much as it would cost twice its patches, and a keyframe written — the whole state read,
 * serialised and deflated — four times as often.) An as-of read replays at most that many patches.
 */
export const PATCH_WEIGHT_PER_KEYFRAME = 4;

/** Patches between keyframes at most: bounds the replay of an as-of read. */
const MAX_PATCHES_PER_KEYFRAME = 256;

export class StateWriter {
  private readonly maxPatches: number;
  private readonly patchWeight: number;
  private written = noWrites();
  /** What this store wrote last of each pool (see ./last-written). */
  readonly lastWritten = new LastWritten();

  constructor(
    private readonly db: SqlDb,
    options: Pick<StoreOptions, 'maxPatchesPerKeyframe' | 'patchWeightPerKeyframe'> = {},
  ) {
    this.maxPatches = options.maxPatchesPerKeyframe ?? MAX_PATCHES_PER_KEYFRAME;
    this.patchWeight = options.patchWeightPerKeyframe ?? PATCH_WEIGHT_PER_KEYFRAME;
  }

  /** What the committed writes did since start (a copy). */
  stats(): WriteStats {
    return { ...this.written };
  }

  /**
   * Writes one collector cycle atomically: each changed pool's new state (as a keyframe or a patch) and its
   * transitions, and the cycle marker. A crash leaves the previous cycle's consistent state. `writes` is taken one
   * at a time, each written before the next is asked for: a writer can analyse each pool as the store asks for it,
   * so a pool's analysis is garbage once written instead of living until the cycle's last pool is analysed.
   */
  async writeCycle(cycle: { id: string; at: string }, writes: Iterable<PoolWrite>): Promise<void> {
    // Counted as the cycle goes, kept only if it commits (cycles are written one at a time: the collector's never
    // overlap).
    const before = { ...this.written };
    const shapes: [string, StoredShape, string][] = [];
    try {
      await this.writeCycleTx(cycle, writes, shapes);
    } catch (e) {
      this.written = before;
      throw e;
    }
    this.lastWritten.written(shapes);
  }

  private async writeCycleTx(
    cycle: { id: string; at: string },
    writes: Iterable<PoolWrite>,
    shapes: [string, StoredShape, string][],
  ): Promise<void> {
    await this.db.tx(async (t) => {
      let transitions = 0;
      let pools = 0;
      const notices: string[] = [];
      for (const w of writes) {
        pools++;
        for (const e of w.transitions) {
          await t.run(
            'INSERT INTO transitions (pool_key, at, field, from_value, to_value, detail) VALUES (?, ?, ?, ?, ?, ?)',
            [e.poolKey, e.at, e.field, e.from, e.to, e.detail ?? null],
          );
          transitions++;
        }
        if (!w.detailUnchanged) await this.writeState(t, cycle.at, w, shapes);
        else if (w.transitions.length > 0) await this.countEntries(t, w.detail.summary.key);
        if (this.db.dialect === 'postgres') notices.push(changeNotice(w.detail.summary.key, cycle.at, w.transitions));
      }
      this.written.transitions += transitions;
      await t.run('INSERT INTO cycles (id, at, pools, transitions) VALUES (?, ?, ?, ?)', [
        cycle.id,
        cycle.at,
        pools,
        transitions,
      ]);
      // Other replicas reading the same PostgreSQL learn of the change at commit (LISTEN/NOTIFY).
      for (const payload of notices) await t.all('SELECT pg_notify(?, ?)', [CHANGE_CHANNEL, payload]);
    });
  }

  /**
   * A pool's new state: its history row (a keyframe, or a patch of the previous state) and its current state.
   * The current state is kept apart: the document without its tables of rows in `pools.detail`, each instance
   * row and drift item in `pool_rows` (`rows_apart` = 2). A state prepared against the stored one (see
   * ./last-written) that leaves out most rows then reads and writes only the rows it changed, added or removed;
   * any other write serialises and diffs the whole state. A table the store could not give back in the same order
   * (rows not in the table's order, a key twice) makes the state stored whole in `pools.detail` (`rows_apart` = 0).
   */
  private async writeState(t: SqlDb, at: string, w: PoolWrite, shapes: [string, StoredShape, string][]): Promise<void> {
    const d = w.detail;
    const key = d.summary.key;
    const [prev] = await t.all<PoolRow>(
      'SELECT seq, detail, last_change, key_seq, key_bytes, patch_bytes, rows_apart, rows_instances, rows_drift FROM pools WHERE pool_key = ?',
      [key],
    );
    const seq = prev ? Number(prev.seq) + 1 : 1;
    this.written.states++;
    const staged = this.lastWritten.take(d);
    shapes.push([key, staged.shape, at]);
    // Rows left out are as the stored state has them only if it is the one they were compared with.
    const rowsKnown = !!prev && staged.rowsAsOf === prev.last_change;
    let state = staged.stored;
    if (prev && Number(prev.rows_apart) === TABLES_APART && rowsKnown && keptApart(state)) {
      let rows = 0;
      let written = 0;
      for (const tbl of ROW_TABLES) {
        for (const r of state.tables[tbl].rows) {
          rows++;
          if (r !== null) written++;
        }
      }
      // A few rows: read those alone (one by one); many: the whole tables at once.
      if (written <= 16 || written * 4 <= rows) {
        if (await this.writeChangedRows(t, at, key, prev, seq, state, staged.rowKeys)) {
          this.written.changedRows++;
          return;
        }
      }
    }
    this.written.wholeTables++;
    let prevRows: StoredRows | null = null;
    const previous = async (p: PoolRow) => (prevRows ??= await this.storedRows(t, key, p));
    if (leavesOut(state))
      state = (prev && rowsKnown ? completeStored(state, await previous(prev)) : null) ?? storedState(d);
    let body: { kind: HistoryKind; text: string } | null = null;
    if (prev && this.patchAllowed(prev, seq)) {
      // Rows compare as text: only those that changed are parsed (a write usually changes a few).
      const patch = diffStoredRows(await previous(prev), {
        rest: state.rest,
        tables: state.tables as Record<RowTable, RowsText>,
      });
      body = patch && this.patchBody(prev, patch);
    }
    body ??= { kind: 'key', text: deflateDoc(storedText(state)) };
    // Kept apart when reading can give the tables back as they are.
    const apart = keptApart(state);
    await this.saveState(
      t,
      at,
      key,
      d,
      prev,
      seq,
      body,
      apart ? state.restText : storedText(state),
      apart ? TABLES_APART : WHOLE,
      state.rest.summary,
      rowCounts(apart ? state : null),
    );
    const wasApart = prev ? Number(prev.rows_apart) === TABLES_APART : false;
    if (!apart) {
      if (wasApart) this.written.rowsWritten += await t.run('DELETE FROM pool_rows WHERE pool_key = ?', [key]);
      return;
    }
    // The rows kept apart before, compared as text: only those that differ are written.
    const before = wasApart ? await previous(prev as PoolRow) : null;
    for (const tbl of ROW_TABLES) {
      const was = new Map<string, string>();
      const old = before ? before.tables[tbl] : null;
      if (old) for (let i = 0; i < old.keys.length; i++) was.set(old.keys[i] as string, old.rows[i] as string);
      const mine = state.tables[tbl];
      const written: Pick<RowChange, 'key' | 'text' | 'was'>[] = [];
      for (let i = 0; i < mine.keys.length; i++) {
        const k = mine.keys[i] as string;
        written.push({ key: k, text: mine.rows[i] as string, was: was.get(k) });
        was.delete(k);
      }
      await this.writeRows(t, key, tbl, written, [...was.keys()]);
    }
  }

  /**
   * The write of a state kept apart whose writer left out the rows it did not change: takes the keys of the stored
   * rows from the writer (when it names them and the stored rows are as many) or reads them, reads the previous
   * text of the rows written, and writes only those. False (nothing done) when the stored rows are not what the
   * writer saw after all (a row left out that is not there).
   */
  private async writeChangedRows(
    t: SqlDb,
    at: string,
    key: string,
    prev: PoolRow,
    seq: number,
    state: StoredState,
    known?: Staged['rowKeys'],
  ): Promise<boolean> {
    const stored = this.knownRowKeys(prev, known) ?? (await this.storedRowKeys(t, key));
    const changes: { tbl: RowTable; written: RowChange[]; removed: string[] }[] = [];
    for (const tbl of ROW_TABLES) {
      const { keys, rows } = state.tables[tbl];
      const there = stored[tbl];
      const written: RowChange[] = [];
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as string;
        const text = rows[i];
        if (text === null || text === undefined) {
          if (!there.has(k)) return false;
          continue;
        }
        const was = there.has(k)
          ? (
              await t.all<{ body: string }>(
                'SELECT body FROM pool_rows WHERE pool_key = ? AND tbl = ? AND row_key = ?',
                [key, tbl, k],
              )
            )[0]?.body
          : undefined;
        if (was !== undefined) this.written.rowsRead++;
        written.push({ key: k, text, was, after: i === 0 ? null : (keys[i - 1] as string) });
      }
      const kept = new Set(keys);
      const removed: string[] = [];
      for (const k of there.keys()) if (!kept.has(k)) removed.push(k);
      changes.push({ tbl, written, removed });
    }
    let body: { kind: HistoryKind; text: string } | null = null;
    if (this.patchAllowed(prev, seq)) {
      const patch = diffHistory(JSON.parse(prev.detail) as object, state.rest);
      if (patch) {
        for (const c of changes) {
          const rows = diffChangedRows(c.written, c.removed);
          if (rows.del || rows.set || rows.edit || rows.add) patch.tables[c.tbl] = rows;
        }
        body = this.patchBody(prev, patch);
      }
    }
    // A keyframe says the whole state: the rows left out are read.
    if (!body) {
      const whole = completeStored(state, await this.storedRows(t, key, prev));
      if (!whole) return false;
      body = { kind: 'key', text: deflateDoc(storedText(whole)) };
    }
    await this.saveState(
      t,
      at,
      key,
      null,
      prev,
      seq,
      body,
      state.restText,
      TABLES_APART,
      state.rest.summary,
      rowCounts(state),
    );
    for (const c of changes) await this.writeRows(t, key, c.tbl, c.written, c.removed);
    return true;
  }

  /** The keys of a pool's rows kept apart, per table, as stored. */
  private async storedRowKeys(t: SqlDb, key: string): Promise<Record<RowTable, ReadonlySet<string>>> {
    const stored = { instances: new Set<string>(), drift: new Set<string>() } satisfies Record<RowTable, Set<string>>;
    for (const r of await t.all<{ tbl: string; row_key: string }>(
      'SELECT tbl, row_key FROM pool_rows WHERE pool_key = ?',
      [key],
    )) {
      stored[r.tbl as RowTable]?.add(r.row_key);
      this.written.rowsRead++;
    }
    return stored;
  }

  /**
   * The keys of the rows the state was compared with, when the stored rows are as many per table as the pool's row
   * counts them (else null: read them). Reading the keys made a JavaScript object of each of a pool's 160-odd rows.
   */
  private knownRowKeys(prev: PoolRow, known: Staged['rowKeys']): Staged['rowKeys'] | null {
    if (!known) return null;
    return ROW_TABLES.every((tbl) => Number(prev[ROW_COUNT_COLUMN[tbl]]) === known[tbl].size) ? known : null;
  }

  /** Writes a pool's rows kept apart that differ from what they were (new, changed), and deletes those removed. */
  private async writeRows(
    t: SqlDb,
    key: string,
    tbl: RowTable,
    written: readonly Pick<RowChange, 'key' | 'text' | 'was'>[],
    removed: readonly string[],
  ): Promise<void> {
    for (const r of written) {
      if (r.was === r.text) continue;
      this.written.rowsWritten++;
      if (r.was === undefined)
        await t.run('INSERT INTO pool_rows (pool_key, tbl, row_key, body) VALUES (?, ?, ?, ?)', [
          key,
          tbl,
          r.key,
          r.text,
        ]);
      else
        await t.run('UPDATE pool_rows SET body = ? WHERE pool_key = ? AND tbl = ? AND row_key = ?', [
          r.text,
          key,
          tbl,
          r.key,
        ]);
    }
    for (const k of removed)
      await t.run('DELETE FROM pool_rows WHERE pool_key = ? AND tbl = ? AND row_key = ?', [key, tbl, k]);
    this.written.rowsWritten += removed.length;
  }

  /** Whether the next history row may be a patch (else a keyframe is due). */
  private patchAllowed(prev: PoolRow, seq: number): boolean {
    return Number(prev.key_seq) > 0 && seq - Number(prev.key_seq) <= this.maxPatches;
  }

  /** A patch's history row, or null when a keyframe should say it (the patches since the last would weigh too much). */
  private patchBody(prev: PoolRow, patch: HistoryPatch): { kind: HistoryKind; text: string } | null {
    const text = deflateIfShorter(JSON.stringify(patch));
    return Number(prev.patch_bytes) + text.length < Number(prev.key_bytes) * this.patchWeight
      ? { kind: 'rows', text }
      : null;
  }

  /** The history row, and the pool's row and summary (`detail`: the state, or without its tables when apart). */
  private async saveState(
    t: SqlDb,
    at: string,
    key: string,
    d: PoolDetail | null,
    prev: PoolRow | undefined,
    seq: number,
    body: { kind: HistoryKind; text: string },
    detail: string,
    layout: number,
    summary: PoolSummary,
    counts: Record<RowTable, number>,
  ): Promise<void> {
    const isKey = body.kind === 'key';
    const keySeq = isKey ? seq : Number(prev?.key_seq);
    const keyBytes = isKey ? body.text.length : Number(prev?.key_bytes);
    const patchBytes = isKey ? 0 : Number(prev?.patch_bytes) + body.text.length;
    if (isKey) this.written.keyframes++;
    else this.written.patches++;
    this.written.historyBytes += body.text.length;
    await t.run('INSERT INTO pool_history (pool_key, seq, at, kind, body) VALUES (?, ?, ?, ?, ?)', [
      key,
      seq,
      at,
      body.kind,
      body.text,
    ]);
    if (prev) {
      await t.run(
        'UPDATE pools SET seq = ?, detail = ?, last_change = ?, key_seq = ?, key_bytes = ?, patch_bytes = ?, rows_apart = ?, rows_instances = ?, rows_drift = ?, deleted_at = ? WHERE pool_key = ?',
        [
          seq,
          detail,
          at,
          keySeq,
          keyBytes,
          patchBytes,
          layout,
          counts.instances,
          counts.drift,
          goneSince(summary) ?? null,
          key,
        ],
      );
      await t.run('UPDATE pool_summaries SET summary = ?, last_change = ? WHERE pool_key = ?', [
        JSON.stringify(summary),
        at,
        key,
      ]);
    } else {
      const ref = (d as PoolDetail).summary.ref;
      await t.run(
        'INSERT INTO pools (pool_key, context, namespace, name, first_seen, last_change, seq, detail, key_seq, key_bytes, patch_bytes, rows_apart, rows_instances, rows_drift, deleted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        [
          key,
          ref.context,
          ref.namespace,
          ref.name,
          at,
          at,
          seq,
          detail,
          keySeq,
          keyBytes,
          patchBytes,
          layout,
          counts.instances,
          counts.drift,
          goneSince(summary) ?? null,
        ],
      );
      await t.run('INSERT INTO pool_summaries (pool_key, last_change, summary) VALUES (?, ?, ?)', [
        key,
        at,
        JSON.stringify(summary),
      ]);
    }
  }

  /** A pool's stored current state split by row (whatever its layout). */
  private async storedRows(db: SqlDb, key: string, row: Pick<PoolRow, 'detail' | 'rows_apart'>): Promise<StoredRows> {
    const layout = Number(row.rows_apart);
    if (layout === WHOLE) return splitStored(inflateDoc(row.detail));
    const rows = await db.all<TableRow>('SELECT tbl, row_key, body FROM pool_rows WHERE pool_key = ?', [key]);
    this.written.rowsRead += rows.length;
    return apartRows(row.detail, layout, rows);
  }

  /**
   * Records timeline entries outside a collector cycle (a resync marker): the pool's state history is not
   * touched. Other replicas hear of it through PostgreSQL as of any stored change.
   */
  async appendEntries(entries: TimelineEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.db.tx(async (t) => {
      for (const e of entries) {
        await t.run(
          'INSERT INTO transitions (pool_key, at, field, from_value, to_value, detail) VALUES (?, ?, ?, ?, ?, ?)',
          [e.poolKey, e.at, e.field, e.from, e.to, e.detail ?? null],
        );
      }
      for (const key of new Set(entries.map((e) => e.poolKey))) await this.countEntries(t, key);
      if (this.db.dialect === 'postgres') {
        for (const key of new Set(entries.map((e) => e.poolKey))) {
          const mine = entries.filter((e) => e.poolKey === key);
          await t.all('SELECT pg_notify(?, ?)', [
            CHANGE_CHANNEL,
            changeNotice(key, (mine[mine.length - 1] as TimelineEntry).at, mine),
          ]);
        }
      }
    });
  }

  /**
   * Records when each pool's scale set was last read from Azure (pool key, RFC 3339), in one transaction. A time
   * earlier than the one stored leaves it as it is.
   */
  async recordAzureReads(reads: Iterable<readonly [key: string, at: string]>): Promise<void> {
    await this.db.tx(async (t) => {
      for (const [key, at] of reads) {
        await t.run(
          'INSERT INTO azure_reads (pool_key, read_at) VALUES (?, ?) ON CONFLICT (pool_key) DO UPDATE SET read_at = excluded.read_at WHERE azure_reads.read_at < excluded.read_at',
          [key, at],
        );
      }
    });
  }

  /** Counts timeline entries stored for a pool without a new state (see poolVersion). */
  private async countEntries(t: SqlDb, key: string): Promise<void> {
    await t.run('UPDATE pools SET entries = entries + 1 WHERE pool_key = ?', [key]);
  }
}
