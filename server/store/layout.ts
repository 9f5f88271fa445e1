// Where a pool's current state is kept (its layout: whole in `pools.detail`, or its tables of rows apart in
// `pool_rows`), the rows the write and read paths take from `pools` and `pool_rows`, and the kinds of history row.

import type { PoolDetail } from '@/lib/api-types';
import { inRowOrder, TABLE_ORDER } from '@/lib/row-order';
import {
  inflateDoc,
  parseStored,
  ROW_TABLES,
  splitStored,
  unpackDetail,
  type RowTable,
  type StoredRows,
  type StoredState,
} from './pack';

/** The column of `pools` that counts a table's rows in `pool_rows` (-1: not counted yet). */
export const ROW_COUNT_COLUMN = { instances: 'rows_instances', drift: 'rows_drift' } as const satisfies Record<
  RowTable,
  string
>;

/**
 * Where a pool's current state is (`pools.rows_apart`): every table of rows (ROW_TABLES) in `pool_rows` and the
 * rest in `pools.detail`; or, when a table could not be kept apart (see keptApart), all of it in `pools.detail`.
 */
export const WHOLE = 0;
export const TABLES_APART = 2;

/** The tables a layout keeps in `pool_rows`. */
function tablesApart(layout: number): readonly RowTable[] {
  return layout === TABLES_APART ? ROW_TABLES : [];
}

/** Whether reading a state kept apart gives its tables back as they are (each in its table's order, keys once). */
export function keptApart(state: StoredState): boolean {
  return ROW_TABLES.every((t) => inRowOrder(state.tables[t].keys, TABLE_ORDER[t]));
}

/** How many rows each table of a state kept apart puts in `pool_rows` (none for a state stored whole). */
export function rowCounts(apart: StoredState | null): Record<RowTable, number> {
  return { instances: apart?.tables.instances.keys.length ?? 0, drift: apart?.tables.drift.keys.length ?? 0 };
}

/** A row of `pool_rows`. */
export interface TableRow {
  tbl: string;
  row_key: string;
  body: string;
}

/** A pool's row in `pools`, as the write path reads it. */
export interface PoolRow {
  seq: number;
  detail: string;
  last_change: string;
  key_seq: number;
  key_bytes: number;
  patch_bytes: number;
  rows_apart: number;
  rows_instances: number;
  rows_drift: number;
}

/**
 * A state kept apart, split by row: its document (without the tables `pool_rows` holds) and those tables' rows,
 * each in the table's order.
 */
export function apartRows(restText: string, layout: number, rows: readonly TableRow[]): StoredRows {
  const split = splitStored(restText);
  for (const t of tablesApart(layout)) {
    const order = TABLE_ORDER[t];
    const mine = rows.filter((r) => r.tbl === t).sort((a, b) => order(a.row_key, b.row_key));
    split.tables[t] = { keys: mine.map((r) => r.row_key), rows: mine.map((r) => r.body) };
  }
  return split;
}

/**
 * History row kinds: `key` (the whole state, deflated: ./pack) and `rows` (a {@link HistoryPatch}: keyed tables
 * by key; deflated when longer than 512 bytes).
 */
export type HistoryKind = 'key' | 'rows';

/** A pool's current state from its row in `pools` and (kept apart) its rows in `pool_rows`. */
export function revive(
  row: { detail: string; last_change: string; rows_apart: number },
  at: string,
  rows: readonly TableRow[] | undefined,
): PoolDetail {
  const layout = Number(row.rows_apart);
  let doc: Record<string, unknown>;
  if (layout === WHOLE) doc = parseStored(inflateDoc(row.detail));
  else {
    const split = apartRows(row.detail, layout, rows ?? []);
    doc = split.rest;
    for (const t of ROW_TABLES) doc[t] = split.tables[t].rows.map((r) => JSON.parse(r) as unknown);
  }
  const d = unpackDetail(doc as unknown as PoolDetail);
  return { ...d, summary: { ...d.summary, lastChange: row.last_change }, at };
}
