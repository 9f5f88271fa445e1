'use client';

import Link from 'next/link';
import { NoDataView } from '@/components/data/no-data-view';
import { ErrorPanel } from '@/components/ui/error-panel';
import { StoreFailure } from '@/components/ui/store-failure';

export default function ErrorPage({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <main id="main" className="mx-auto max-w-3xl space-y-4 px-4 py-10">
      <ErrorPanel title="This page could not be shown" error={error} onRetry={reset} />
      <StoreFailure />
      <Link href="/" className="underline">
        Back to all pools
      </Link>
      <NoDataView />
    </main>
  );
}
