// The formatter's settings: `npm run format` writes them, `npm run check` and `npm test` check them. Tailwind's
// plugin sorts class lists as Tailwind orders them, reading the theme from the app's stylesheet.
/** @type {import('prettier').Config} */
const config = {
  printWidth: 120,
  singleQuote: true,
  plugins: ['prettier-plugin-tailwindcss'],
  tailwindStylesheet: './app/globals.css',
  // Kubernetes manifests quote with double quotes, as kubectl and the upstream projects write them.
  overrides: [{ files: ['*.yaml', '*.yml'], options: { singleQuote: false } }],
};

export default config;
