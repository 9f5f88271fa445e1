import { FINDING_ORDER } from '@/lib/diagnosis';
import { DRIFT_KINDS } from '@/lib/api-types';
import { PageHeader } from '@/components/ui/page-header';

// Until the collector and the fleet view land, the home page says what poolscope will show and which
// diagnoses the core already knows, so a fresh checkout renders something true.
export default function HomePage() {
  return (
    <main className="mx-auto max-w-4xl px-6 py-10">
      <PageHeader
        title="poolscope"
        subtitle="Cluster API MachinePools on Azure: readiness, providerID drift and safe resync."
      />
      <section aria-labelledby="status" className="mt-8 rounded-lg border border-amber-300 bg-amber-50 p-4 dark:border-amber-700 dark:bg-amber-950">
        <h2 id="status" className="font-semibold">Not connected to a fleet yet</h2>
        <p className="mt-1 text-sm">
          The fleet overview appears here once the collector is built. The domain core below is in place and tested.
        </p>
      </section>
      <div className="mt-8 grid gap-8 sm:grid-cols-2">
        <section aria-labelledby="findings">
          <h2 id="findings" className="font-semibold">Findings it diagnoses</h2>
          <ul className="mt-2 space-y-1 font-mono text-sm">
            {FINDING_ORDER.map((code) => <li key={code}>{code}</li>)}
          </ul>
        </section>
        <section aria-labelledby="drift">
          <h2 id="drift" className="font-semibold">Drift it detects</h2>
          <ul className="mt-2 space-y-1 font-mono text-sm">
            {DRIFT_KINDS.map((kind) => <li key={kind}>{kind}</li>)}
          </ul>
        </section>
      </div>
    </main>
  );
}
