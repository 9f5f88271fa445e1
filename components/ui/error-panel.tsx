'use client';

export function ErrorPanel({ title, error, onRetry }: { title: string; error: Error; onRetry?: () => void }) {
  return (
    <div
      role="alert"
      className="rounded border border-red-300 bg-red-50 p-4 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
    >
      <h2 className="font-semibold">{title}</h2>
      <p className="mt-1">{error.message}</p>
      {onRetry ? (
        <button
          type="button"
          onClick={onRetry}
          className="mt-3 rounded bg-red-700 px-3 py-1 text-white hover:bg-red-800"
        >
          Retry
        </button>
      ) : null}
    </div>
  );
}
