import Link from 'next/link';
import { LiveIndicator } from './live-indicator';
import { ThemeToggle } from './theme-toggle';

export function AppHeader() {
  return (
    <header className="border-b border-slate-200 bg-white/80 dark:border-slate-800 dark:bg-slate-950/80">
      <div className="mx-auto flex max-w-screen-2xl items-center justify-between gap-4 px-4 py-2">
        <Link href="/" className="font-semibold tracking-tight">
          poolscope
        </Link>
        <div className="flex items-center gap-4">
          <LiveIndicator />
          <ThemeToggle />
        </div>
      </div>
    </header>
  );
}
