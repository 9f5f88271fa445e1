import { chromium } from 'playwright';
const b = await chromium.launch({ executablePath: '/usr/bin/chromium' });
const p = await b.newPage({ viewport: { width: 1400, height: 1000 } });
await p.goto(process.argv[2]); await p.waitForTimeout(3000);
const ys = process.argv.slice(3).map(Number); let i=0;
for (const y of ys) { await p.screenshot({ path: `/tmp/c${i++}.png`, fullPage: true, clip: { x: 0, y, width: 1400, height: 950 } }); }
await b.close();
