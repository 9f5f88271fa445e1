import Link from 'next/link';
import { NoDataView } from '@/components/data/no-data-view';

export default function PoolNotFound() {
  return (
    <main id="main" className="mx-auto max-w-xl space-y-3 px-6 py-16">
      <h1 className="text-xl font-semibold">Unknown pool</h1>
      <p className="text-slate-600 dark:text-slate-300">
        poolscope knows no MachinePool at this address (or did not know it at the instant the link asks for). It may
        have been deleted, or the link may name another context or namespace.
      </p>
      <Link href="/" className="inline-block underline">
        Back to all pools
      </Link>
      <NoDataView />
    </main>
  );
}
