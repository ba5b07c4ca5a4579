// The page's buttons as a user clicks them, in headless Chromium (Debian's,
// or $CHROMIUM) driven by playwright-core ($PLAYWRIGHT_CORE). Run by the
// test `the_page_s_buttons_do_what_they_say` in browser.rs, which runs the
// game while this clicks, and checks the world at each `sync:` line this
// prints (it may change the world there too, as the game would).
//
// Prints `ok: what` or `FAILED: what` for each check; exits 1 if any failed.
//
//   node clicks.mjs URL HURT FAR
//
// URL: the inspector's page; HURT: an entity with Position, Velocity and
// Health; FAR: an entity past the first page of the list.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require(process.env.PLAYWRIGHT_CORE || 'playwright-core');

const [base, hurt, far] = process.argv.slice(2);
if (!base || !hurt || !far) {
  console.error('usage: clicks.mjs URL HURT FAR');
  process.exit(2);
}

let failed = false;
const check = (ok, what) => {
  console.log(`${ok ? 'ok' : 'FAILED'}: ${what}`);
  failed ||= !ok;
};
/** Tells the test a point was reached; it checks (and may change) the world there. */
const sync = (name) => console.log(`sync: ${name}`);
/** Waits until `f()` is true (polled in Node); false after `ms`. */
async function until(f, ms = 20_000) {
  const end = Date.now() + ms;
  for (;;) {
    if (await f()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const profile = mkdtempSync(join(tmpdir(), 'inspector-clicks-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1400, height: 1000 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run', '--disable-quic'],
  timeout: 60_000,
});

try {
  const page = context.pages()[0] ?? await context.newPage();
  page.setDefaultTimeout(30_000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const text = (sel) => page.locator(sel).first().textContent();

  // The list turns to the page of an entity selected by the address.
  await page.goto(`${base}?select=${far}`);
  await page.waitForSelector('body[data-ready="yes"]');
  const shown = await until(async () => (await page.locator('#entity-list .entity.selected').count()) === 1);
  check(shown && (await text('#entity-list .entity.selected')) === far,
    `the list shows the selected ${far}, marked (page ${await text('#page')})`);
  check((await text('#page')).startsWith('101-'), `on its page: ${await text('#page')}`);
  // The user's paging then holds: back one page, and it stays there.
  await page.click('#prev');
  const back = await until(async () => (await text('#page')).startsWith('51-'));
  await page.waitForTimeout(1500);
  check(back && (await text('#page')).startsWith('51-'), `Previous pages back and stays: ${await text('#page')}`);

  // One moment's counts: the header and the tables agree with each other.
  const counts = await until(async () => {
    const header = await text('#entities');
    const tables = await text('#table-summary');
    return tables.includes(`, ${header} entities,`);
  });
  check(counts, `one entity count: header ${await text('#entities')}, tables "${await text('#table-summary')}"`);

  // Apply: the world takes the value; the card then follows the world again.
  await page.goto(`${base}?select=${hurt}`);
  await page.waitForSelector('body[data-ready="yes"]');
  const health = page.locator('.card[data-component="Health"] textarea');
  await health.fill('42');
  await page.locator('.card[data-component="Health"] .apply').click();
  await page.waitForSelector('body[data-last-edit="ok"]');
  check((await text('.card[data-component="Health"] .ok')) === 'applied', 'Apply says applied');
  sync('applied'); // The test checks Health(42), then sets Health(7) as the game would.
  const follows = await until(async () => JSON.parse(await health.inputValue()) === 7);
  check(follows, `after Apply the card follows the world: ${await health.inputValue()}`);

  // A value being typed is not overwritten; Revert brings the world's back.
  await health.fill('99');
  await page.waitForTimeout(1500);
  check((await health.inputValue()) === '99', 'a value being typed is kept while the world refreshes');
  await page.locator('.card[data-component="Health"] .revert').click();
  const reverted = await until(async () => (await health.inputValue()).trim() === '7');
  check(reverted, `Revert shows the world's value again: ${await health.inputValue()}`);

  // Refused edits say why, under the card.
  await health.fill('{ not json');
  await page.locator('.card[data-component="Health"] .apply').click();
  await page.waitForSelector('body[data-last-edit="error"]');
  check((await text('.card[data-component="Health"] .error')).startsWith('not JSON'),
    `a value that is not JSON: ${await text('.card[data-component="Health"] .error')}`);
  await health.fill('-5');
  await page.evaluate(() => { delete document.body.dataset.lastEdit; });
  await page.locator('.card[data-component="Health"] .apply').click();
  await page.waitForSelector('body[data-last-edit="error"]');
  const refusal = await text('.card[data-component="Health"] .error');
  check(refusal.length > 0 && !refusal.startsWith('not JSON'), `the engine's refusal of -5: ${refusal}`);

  // A marker is inserted with an empty value.
  const insert = page.locator('.card', { has: page.locator('input[list="component-names"]') });
  await insert.locator('input[list="component-names"]').fill('Frozen');
  await insert.locator('button', { hasText: 'Insert' }).click();
  const marker = await until(async () => (await page.locator('.card[data-component="Frozen"]').count()) === 1);
  check(marker, 'an empty value inserts a marker');
  sync('frozen'); // The test checks the entity has Frozen.

  // Loop controls: refused values show an error and change nothing.
  const range = '`scale` must be a number from 0 to 100';
  for (const [value, expected] of [['200', range], ['-1', range], ['', 'the time scale: a number from 0 to 100']]) {
    await page.fill('#scale', value);
    await page.click('#apply-scale');
    const shownError = await until(async () => (await text('#loop-error')).length > 0, 5_000);
    check(shownError && (await text('#loop-error')) === expected, `time scale "${value}" is refused: "${await text('#loop-error')}"`);
    await page.evaluate(() => { document.getElementById('loop-error').textContent = ''; });
  }
  const scale = () => page.evaluate(async () => (await rpc('loop.status')).scale);
  check((await scale()) === 1 && (await text('#state')) === 'running',
    `the refused scales changed nothing: scale ${await scale()}, "${await text('#state')}"`);
  await page.fill('#scale', '0.5');
  await page.click('#apply-scale');
  const scaled = await until(async () => (await text('#state')) === 'running x0.5');
  check(scaled && (await scale()) === 0.5 && (await text('#loop-error')) === '', `time scale 0.5: "${await text('#state')}"`);
  await page.fill('#scale', '1');
  await page.click('#apply-scale');

  // Step N frames while paused: exactly N game frames run (Ticks counts them).
  const ticks = () => page.evaluate(async () => (await rpc('world.get_resource', { resource: 'Ticks' })).value);
  await page.click('#pause');
  check(await until(async () => (await text('#state')) === 'paused'), 'Pause pauses');
  const before = await ticks();
  await page.waitForTimeout(500);
  check((await ticks()) === before, 'no game frame runs while paused');
  await page.fill('#step-frames', '5');
  await page.click('#step');
  const stepped = await until(async () => (await ticks()) === before + 5);
  await page.waitForTimeout(1000);
  check(stepped && (await ticks()) === before + 5, `Step with 5 runs 5 game frames: ${(await ticks()) - before}`);
  check((await text('#state')) === 'paused', `paused again after the step: ${await text('#state')}`);
  const server = '`frames` must be an integer from 1 to 600';
  const field = 'frames to step: a whole number from 1 to 600';
  for (const [value, expected] of [['0', server], ['2.5', server], ['601', server], ['', field]]) {
    await page.fill('#step-frames', value);
    await page.click('#step');
    const stepError = await until(async () => (await text('#loop-error')).length > 0, 5_000);
    check(stepError && (await text('#loop-error')) === expected, `a step of "${value}" frames is refused: "${await text('#loop-error')}"`);
    await page.evaluate(() => { document.getElementById('loop-error').textContent = ''; });
  }
  await page.waitForTimeout(500);
  check((await ticks()) === before + 5, `the refused steps ran nothing: ${(await ticks()) - before}`);
  await page.click('#resume');

  // Despawn: the panel says so and names no live entity.
  await page.locator('#entity-view button', { hasText: 'Despawn' }).click();
  const gone = await until(async () => (await text('#entity-view')).includes('was despawned'));
  check(gone && (await text('#entity-view')) === `${hurt} was despawned`, `after Despawn: "${await text('#entity-view')}"`);
  check((await text('#selected')) === '', `no entity selected: "${await text('#selected')}"`);
  sync('despawned'); // The test checks the entity is gone.
  await page.waitForTimeout(1500);
  check((await text('#entity-view')) === `${hurt} was despawned`, 'the panel stays on the despawned message');

  check(errors.length === 0, `no errors in the page's console: ${JSON.stringify(errors)}`);
} catch (e) {
  check(false, `the clicks ran through: ${e}`);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
