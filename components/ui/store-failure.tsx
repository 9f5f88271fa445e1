'use client';
// On the error page: when the store is failing, says so and what to do. A page's own error message is withheld in
// production builds; readiness says whether the store is the cause (503 `store-failing`, with the reason).

import { useQuery } from '@tanstack/react-query';
import { ApiRequestError, fetchJson } from '@/components/data/fetch-json';

/** The store's failure as readiness reports it, or null when readiness names another cause or none. */
async function storeFailure(signal: AbortSignal): Promise<string | null> {
  try {
    await fetchJson('/api/readyz', signal);
    return null;
  } catch (e) {
    return e instanceof ApiRequestError && e.code === 'store-failing' ? e.message : null;
  }
}

export function StoreFailure() {
  const q = useQuery({
    queryKey: ['store-failure'],
    queryFn: ({ signal }) => storeFailure(signal),
    retry: false,
    staleTime: 0,
  });
  if (!q.data) return null;
  return (
    <p role="alert" className="font-medium text-red-800 dark:text-red-300">
      The store is failing: {q.data}
    </p>
  );
}
