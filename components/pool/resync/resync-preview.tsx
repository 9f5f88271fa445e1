import type { UseQueryResult } from '@tanstack/react-query';
import type { ResyncResult } from '@/lib/api-types';
import { IdChanges } from './resync-result';

/** The server-side dry run of the chosen mode: what it would change, or why the API server or poolscope says no. */
export function ResyncPreview({ preview }: { preview: UseQueryResult<ResyncResult> }) {
  return (
    <section aria-labelledby="preview-h" className="space-y-1">
      <h3 id="preview-h" className="font-medium">
        Preview (server-side dry run)
      </h3>
      {preview.isPending ? <p className="text-sm">Asking the API server what would change…</p> : null}
      {preview.isError ? (
        <p role="alert" data-testid="resync-preview-error" className="text-sm text-red-800 dark:text-red-200">
          {preview.error.message}
        </p>
      ) : null}
      {preview.data ? (
        <div data-testid="resync-preview" className="space-y-1 text-sm">
          <p>{preview.data.message}</p>
          {preview.data.mode === 'sync-provider-ids' ? (
            <IdChanges added={preview.data.added} removed={preview.data.removed} />
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
