import { Skeleton } from '@/components/ui/skeleton';

/** The pool page's shape while it loads: findings, verdict, timeline, drift matrix. */
export function PoolSkeleton() {
  return (
    <div className="space-y-6" aria-busy="true" aria-label="Loading the pool">
      <Skeleton className="h-20 w-full" />
      <div className="grid gap-2 md:grid-cols-2">
        <Skeleton className="h-24" />
        <Skeleton className="h-24" />
      </div>
      <Skeleton className="h-8 w-1/2" />
      <Skeleton className="h-96 w-full" />
      <div className="space-y-2">
        {Array.from({ length: 5 }, (_, i) => (
          <Skeleton key={i} className="h-8 w-full" />
        ))}
      </div>
    </div>
  );
}
