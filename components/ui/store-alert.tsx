// Says, where data is shown, that the store refuses the collector's writes: what is on screen is as last stored.

import type { StoreHealth } from '@/lib/api-types';
import { LocalTime } from './local-time';

export function StoreAlert({ store }: { store: StoreHealth | null | undefined }) {
  if (store?.state !== 'failing') return null;
  return (
    <p role="alert" className="font-medium text-red-800 dark:text-red-300">
      Not recording: the store has refused every write since {store.since ? <LocalTime iso={store.since} /> : 'start'}
      {store.error ? <> ({store.error})</> : null}. What you see is as last stored; the changes since are stored once it
      takes writes again.
    </p>
  );
}
