// Opens the inspector's page in headless Chromium (playwright-core from
// $PLAYWRIGHT_CORE, Chromium from $CHROMIUM or /usr/bin/chromium), keeps it
// open for SECONDS, and saves a screenshot of it to OUT: the README's
// picture, taken against the showcase:
//
//   cargo run --release --example game --features inspect -- --inspect --port 15713 --frames 1800 &
//   PLAYWRIGHT_CORE=$(scripts/browser-deps.sh | tail -n 1) \
//     node scripts/inspector-shot.mjs 'http://127.0.0.1:15713/?with=Spark&select=first' docs/inspector.png 20
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require(process.env.PLAYWRIGHT_CORE || 'playwright-core');

const [url, out, secondsArg] = process.argv.slice(2);
const seconds = Number(secondsArg || 10);
if (!url || !out || !(seconds > 0)) {
  console.error('usage: inspector-shot.mjs URL OUT.png [SECONDS]');
  process.exit(2);
}
const profile = mkdtempSync(join(tmpdir(), 'inspector-shot-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1500, height: 1000 },
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  timeout: 60_000,
});
try {
  const page = context.pages()[0] ?? await context.newPage();
  await page.goto(url);
  await page.waitForSelector('body[data-ready="yes"]', { timeout: 60_000 });
  await page.waitForTimeout(seconds * 1000);
  // A live entity's cards: the one picked at load may be gone by now.
  await page.locator('#entity-list .entity').first().click();
  await page.waitForTimeout(700);
  await page.screenshot({ path: out });
  console.log(`${out}: the page after ${seconds} s`);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
