import { PoolSkeleton } from '@/components/pool/pool-skeleton';

export default function Loading() {
  return (
    <main id="main" className="mx-auto max-w-screen-2xl px-4 py-6">
      <PoolSkeleton />
    </main>
  );
}
