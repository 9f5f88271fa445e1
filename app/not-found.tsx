import Link from 'next/link';
import { NoDataView } from '@/components/data/no-data-view';

export default function NotFound() {
  return (
    <main className="mx-auto max-w-xl px-6 py-16">
      <h1 className="text-xl font-semibold">Page not found</h1>
      <p className="mt-2 text-slate-600 dark:text-slate-400">Nothing lives at this address.</p>
      <Link href="/" className="mt-4 inline-block underline">
        Back to poolscope
      </Link>
      <NoDataView />
    </main>
  );
}
