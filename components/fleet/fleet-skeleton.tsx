import { Skeleton } from '@/components/ui/skeleton';

/** The fleet page's shape while it loads: source bar, filters, table rows. */
export function FleetSkeleton() {
  return (
    <div className="space-y-4" aria-busy="true" aria-label="Loading the fleet">
      <Skeleton className="h-10 w-full" />
      <Skeleton className="h-8 w-2/3" />
      <div className="space-y-2">
        {Array.from({ length: 8 }, (_, i) => (
          <Skeleton key={i} className="h-9 w-full" />
        ))}
      </div>
    </div>
  );
}
