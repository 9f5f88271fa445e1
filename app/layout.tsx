import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { Providers } from '@/components/data/providers';
import { AppHeader } from '@/components/ui/app-header';
import { THEME_SCRIPT } from '@/components/ui/theme-script';
import './globals.css';

export const metadata: Metadata = {
  title: { default: 'poolscope', template: '%s · poolscope' },
  description: 'Cluster API MachinePools on Azure: readiness, providerID drift and safe resync.',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" suppressHydrationWarning>
      <head>
        <script dangerouslySetInnerHTML={{ __html: THEME_SCRIPT }} />
      </head>
      <body className="min-h-screen bg-white text-slate-900 antialiased dark:bg-slate-950 dark:text-slate-100">
        <a
          href="#main"
          className="sr-only focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:z-50 focus:rounded focus:bg-white focus:px-3 focus:py-2 focus:text-slate-900"
        >
          Skip to content
        </a>
        <Providers>
          <AppHeader />
          {children}
        </Providers>
      </body>
    </html>
  );
}
