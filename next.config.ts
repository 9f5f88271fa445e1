import type { NextConfig } from 'next';

const nextConfig: NextConfig = {
  // The image runs `.next/standalone/server.js` (scripts/build.mjs copies the static assets next to it).
  output: 'standalone',
  reactStrictMode: true,
  poweredByHeader: false,
};

export default nextConfig;
