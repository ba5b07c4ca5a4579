// The page in headless Chromium (Debian's, or $CHROMIUM), driven by
// playwright-core over a static server on 127.0.0.1 that serves the two
// files of the page and nothing else:
//
// 1. `?script=FRAMES`: the page replays the scripted input, one frame per
//    display frame; its checksum must equal EXPECTED (the native run's).
//    The canvas, screenshotted, must not be all background.
// 2. The page as a player gets it: keys pause and resume, switch slow
//    motion; clicks on the canvas reach the game.
// 3. Frame time: rockets clicked in for a few seconds, the page's own
//    per-frame figures (module frame + drawing + copy into the canvas)
//    kept for frames with about 1,000 entities. With SHOT, a screenshot of
//    the arena goes there.
//
//   node browser.mjs SITE_DIR EXPECTED_HEX FRAMES [SHOT.png]
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require(process.env.PLAYWRIGHT_CORE || 'playwright-core');

const [site, expected, framesArg, shot] = process.argv.slice(2);
const frames = Number(framesArg);
if (!site || !/^[0-9a-f]{16}$/.test(expected || '') || !(frames > 0)) {
  console.error('usage: browser.mjs SITE_DIR EXPECTED_HEX FRAMES [SHOT.png]');
  process.exit(2);
}

const files = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/index.html': ['index.html', 'text/html; charset=utf-8'],
  '/fireworks.wasm': ['fireworks.wasm', 'application/wasm'],
};
const server = createServer((req, res) => {
  const path = new URL(req.url, 'http://127.0.0.1').pathname;
  const file = req.method === 'GET' ? files[path] : undefined;
  if (!file) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': file[1], 'cache-control': 'no-store' });
  res.end(readFileSync(join(site, file[0])));
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${server.address().port}/`;

const profile = mkdtempSync(join(tmpdir(), 'fireworks-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 800, height: 860 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run', '--disable-quic'],
  timeout: 60_000,
});
let failed = false;
const check = (ok, what) => {
  console.log(`${ok ? 'ok' : 'FAILED'}: ${what}`);
  failed ||= !ok;
};

try {
  const page = context.pages()[0] ?? await context.newPage();
  page.setDefaultTimeout(120_000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  // Nothing but the local server: any other request fails the test.
  const foreign = [];
  page.on('request', (r) => { if (!r.url().startsWith(base) && !r.url().startsWith('data:')) foreign.push(r.url()); });

  // 1. The scripted run.
  await page.goto(`${base}?script=${frames}`);
  await page.waitForFunction(() => window.fireworks && window.fireworks.done, null, { timeout: 120_000 });
  const got = await page.evaluate(() => document.body.dataset.checksum);
  check(got === expected, `checksum after ${frames} scripted frames in Chromium: ${got}, native ${expected}`);
  const lit = await litPixels(page, await page.locator('canvas').screenshot());
  check(lit.lit > 1000, `the screenshot is not all background: ${lit.lit} of ${lit.total} pixels lit`);

  // 2. Input as a player gives it.
  await page.goto(base);
  const fw = (name) => page.evaluate((n) => window.fireworks.exports[n](), name);
  await page.waitForFunction(() => window.fireworks && window.fireworks.exports.fireworks_screen() === 1,
    null, { timeout: 20_000 });
  await page.keyboard.press('p');
  check(await fw('fireworks_paused') === 1, 'P pauses');
  const box = await page.locator('canvas').boundingBox();
  for (const [fx, fy] of [[0.3, 0.4], [0.5, 0.3], [0.7, 0.5]]) {
    await page.mouse.click(box.x + box.width * fx, box.y + box.height * fy);
  }
  check(await fw('fireworks_pending_clicks') === 3, 'three clicks on the canvas wait in the paused game');
  await page.keyboard.press(' ');
  check(await fw('fireworks_paused') === 0, 'Space resumes');
  await page.waitForFunction(() => window.fireworks.exports.fireworks_pending_clicks() === 0, null,
    { timeout: 5_000 });
  check(true, 'the clicks became rockets on the next frames');
  await page.keyboard.press('s');
  check(await fw('fireworks_scale') === 0.25, 'S slows game time to a quarter');
  await page.keyboard.press('s');
  check(await fw('fireworks_scale') === 1, 'S again: real time');
  await page.keyboard.press('n');
  await page.waitForFunction(() => window.fireworks.exports.fireworks_screen() === 2, null, { timeout: 5_000 });
  check(true, 'N ends the level: the game-over screen');

  // 3. Frame time with about 1,000 entities.
  await page.goto(base);
  await page.waitForFunction(() => window.fireworks && window.fireworks.exports.fireworks_screen() === 1,
    null, { timeout: 20_000 });
  const arena = await page.locator('canvas').boundingBox();
  let best = null;
  for (let i = 0; i < 40; i++) {
    await page.mouse.click(arena.x + arena.width * (0.2 + 0.6 * ((i * 7) % 10) / 10),
      arena.y + arena.height * (0.25 + 0.3 * ((i * 3) % 10) / 10));
    await page.waitForTimeout(200);
    const n = await fw('fireworks_entities');
    if (shot && n > 900 && n < 1300 && !best) {
      best = n;
      await page.locator('.arena').screenshot({ path: shot });
    }
  }
  const figures = await page.evaluate(() => {
    const s = window.fireworks.stats.samples.filter(([n]) => n >= 900 && n <= 1100).map(([, w]) => w);
    s.sort((a, b) => a - b);
    const gaps = window.fireworks.stats.gaps;
    return {
      n: s.length,
      median: s[s.length >> 1],
      p90: s[Math.floor(s.length * 0.9)],
      fps: 1000 / (gaps.reduce((a, b) => a + b, 0) / gaps.length),
    };
  });
  if (figures.n > 0) {
    console.log(`figure: frame work with 900 to 1,100 entities: median ${figures.median.toFixed(2)} ms, ` +
      `90th percentile ${figures.p90.toFixed(2)} ms over ${figures.n} frames; display ${figures.fps.toFixed(0)} fps`);
  } else {
    console.log('figure: no frame had 900 to 1,100 entities');
  }
  if (shot) check(best !== null, `screenshot with ${best} entities in ${shot}`);
  check(errors.length === 0, `no errors on the page ${errors.join('; ')}`);
  check(foreign.length === 0, `no request beyond the local server ${foreign.join(' ')}`);
} finally {
  await context.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

// Pixels of a PNG that differ from the arena's background, decoded by the
// browser itself.
async function litPixels(page, png) {
  return page.evaluate(async (b64) => {
    const blob = await (await fetch(`data:image/png;base64,${b64}`)).blob();
    const bitmap = await createImageBitmap(blob);
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = canvas.getContext('2d');
    ctx.drawImage(bitmap, 0, 0);
    const data = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data;
    let lit = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (Math.abs(data[i] - 12) + Math.abs(data[i + 1] - 14) + Math.abs(data[i + 2] - 26) > 30) lit++;
    }
    return { lit, total: data.length / 4 };
  }, png.toString('base64'));
}
