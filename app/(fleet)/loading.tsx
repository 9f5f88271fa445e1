import { FleetSkeleton } from '@/components/fleet/fleet-skeleton';

export default function Loading() {
  return (
    <main id="main" className="mx-auto max-w-screen-2xl space-y-4 px-4 py-6">
      <h1 className="text-2xl font-bold tracking-tight">MachinePools</h1>
      <FleetSkeleton />
    </main>
  );
}
