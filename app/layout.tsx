import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { Providers } from '@/components/data/providers';
import './globals.css';

export const metadata: Metadata = {
  title: { default: 'poolscope', template: '%s · poolscope' },
  description: 'Cluster API MachinePools on Azure: readiness, providerID drift and safe resync.',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en" suppressHydrationWarning>
      <body className="min-h-screen bg-white text-slate-900 antialiased dark:bg-slate-950 dark:text-slate-100">
        <Providers>{children}</Providers>
      </body>
    </html>
  );
}
