import Link from 'next/link';
import { NoDataView } from '@/components/data/no-data-view';

/**
 * In place of the fleet, for a link whose filters GET /api/pools would refuse (an unknown sort, `drifting=maybe`, a
 * parameter it does not know): what is wrong, and the same link without the parameters at fault.
 */
export function FleetLinkError({ message, without }: { message: string; without: string }) {
  return (
    <>
      <div
        role="alert"
        className="rounded border border-amber-300 bg-amber-50 p-4 text-amber-950 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
      >
        <h2 className="font-semibold">This link&apos;s filters cannot be read</h2>
        <p className="mt-1">{message}</p>
      </div>
      <p className="flex flex-wrap gap-4">
        <Link href={without ? `/?${without}` : '/'} className="underline">
          Show the fleet without them
        </Link>
        {without ? (
          <Link href="/" className="underline">
            Show every pool
          </Link>
        ) : null}
      </p>
      <NoDataView />
    </>
  );
}
