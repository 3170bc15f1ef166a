// Opens a keeptime report in headless Chromium (Debian's /usr/bin/chromium;
// playwright-core never downloads a browser) and checks what the page must be:
// no console errors, no network requests, the expected number of charts, each
// chart with both axis labels and a drawn series per method, no horizontal
// overflow at phone width, and a screenshot that is not blank.
//
//   node check-report.mjs REPORT.html CHARTS SCREENSHOT.png [PAGE.png]
//
// SCREENSHOT.png is the 1280x900 view; PAGE.png, when given, the page from
// the top to the end of the first duration's section (the README picture).
//
// Exit 0 when every check passed; otherwise one line per failure, exit 1.

import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [report, chartsArg, shot, pageShot] = process.argv.slice(2);
if (!report || !chartsArg || !shot) {
  console.error('usage: node check-report.mjs REPORT.html CHARTS SCREENSHOT.png');
  process.exit(2);
}
const expectedCharts = Number(chartsArg);
const failures = [];
const fail = (m) => failures.push(m);

const profile = mkdtempSync(join(tmpdir(), 'keeptime-report-chromium-'));
// A fresh profile each run (playwright passes it as --user-data-dir).
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1280, height: 900 },
  args: [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
});
try {
  const page = browser.pages()[0] || await browser.newPage();
  page.on('console', (msg) => {
    if (msg.type() === 'error') fail(`console error: ${msg.text()}`);
  });
  page.on('pageerror', (e) => fail(`page error: ${e.message}`));
  // Self-contained: anything but the file itself is a failure.
  const url = pathToFileURL(resolve(report)).href;
  await page.route('**/*', (route) => {
    if (route.request().url() === url) return route.continue();
    fail(`the page requested ${route.request().url()}`);
    return route.abort();
  });
  await page.goto(url, { waitUntil: 'load' });
  // Open the per-file sections so every chart is laid out.
  await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; }));

  const charts = await page.evaluate(() => [...document.querySelectorAll('figure.chart')].map((f) => {
    const svg = f.querySelector('svg');
    const texts = svg ? [...svg.querySelectorAll('text')].map((t) => t.textContent.trim()) : [];
    const series = JSON.parse(f.dataset.series || '[]');
    const drawn = series.map((s) => {
      const c = s.color.toLowerCase();
      const sel = f.dataset.kind === 'cdf' ? 'polyline, path, line' : 'circle';
      const n = svg ? [...svg.querySelectorAll(sel)].filter((e) =>
        (e.getAttribute('stroke') || '').toLowerCase() === c
        || (e.getAttribute('fill') || '').toLowerCase() === c).length : 0;
      return { name: s.name, n };
    });
    const box = svg ? svg.getBoundingClientRect() : { width: 0, height: 0 };
    return {
      kind: f.dataset.kind, x: f.dataset.xLabel, y: f.dataset.yLabel, texts, drawn,
      w: box.width, h: box.height,
    };
  }));
  if (charts.length !== expectedCharts) fail(`expected ${expectedCharts} charts, found ${charts.length}`);
  charts.forEach((c, i) => {
    const where = `chart ${i + 1} (${c.kind})`;
    if (!c.texts.includes(c.x)) fail(`${where}: no x axis label "${c.x}"`);
    if (!c.texts.includes(c.y)) fail(`${where}: no y axis label "${c.y}"`);
    if (c.texts.filter((t) => /\d/.test(t)).length < 4) fail(`${where}: fewer than 4 tick labels`);
    if (c.drawn.length === 0) fail(`${where}: no series`);
    for (const s of c.drawn) if (s.n < 1) fail(`${where}: nothing drawn for ${s.name}`);
    if (c.w < 600 || c.h < 300) fail(`${where}: drawn ${c.w}x${c.h} px at 1280 px`);
  });

  await page.screenshot({ path: shot, fullPage: false });
  // Not blank: a good share of the pixels differ from the page background.
  const b64 = (await page.screenshot({ fullPage: false })).toString('base64');
  const inked = await page.evaluate(async (data) => {
    const img = new Image();
    img.src = `data:image/png;base64,${data}`;
    await img.decode();
    const cv = document.createElement('canvas');
    cv.width = img.width; cv.height = img.height;
    const cx = cv.getContext('2d');
    cx.drawImage(img, 0, 0);
    const px = cx.getImageData(0, 0, img.width, img.height).data;
    const colors = new Set();
    let ink = 0;
    for (let i = 0; i < px.length; i += 4) {
      const lum = px[i] + px[i + 1] + px[i + 2];
      if (lum < 600) ink += 1;
      if (i % 64 === 0) colors.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
    }
    return { ink: ink / (px.length / 4), colors: colors.size };
  }, b64);
  if (inked.ink < 0.02 || inked.colors < 8) {
    fail(`screenshot looks blank: ${(inked.ink * 100).toFixed(2)} % ink, ${inked.colors} colours`);
  }
  if (pageShot) {
    const bottom = await page.evaluate(() => {
      const s = document.querySelector('section.duration');
      return s ? s.getBoundingClientRect().bottom + window.scrollY + 16 : document.body.scrollHeight;
    });
    await page.screenshot({ path: pageShot, fullPage: true, clip: { x: 0, y: 0, width: 1280, height: Math.ceil(bottom) } });
  }
  if (statSync(shot).size < 10_000) fail(`screenshot ${shot} is only ${statSync(shot).size} bytes`);

  // Phone width: nothing wider than the screen but the scrolling tables.
  await page.setViewportSize({ width: 390, height: 844 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  if (overflow > 1) fail(`at 390 px the page is ${overflow} px wider than the screen`);
  const narrow = await page.evaluate(() => [...document.querySelectorAll('figure.chart svg')]
    .map((s) => s.getBoundingClientRect().width));
  if (narrow.some((w) => w > 390)) fail(`at 390 px a chart is wider than the screen: ${narrow}`);

  console.log(`${report}: ${charts.length} charts, `
    + `${charts.reduce((a, c) => a + c.drawn.length, 0)} series, `
    + `${(inked.ink * 100).toFixed(1)} % ink in the screenshot`);
} finally {
  await browser.close();
  rmSync(profile, { recursive: true, force: true });
}
if (failures.length) {
  for (const f of failures) console.error(`FAIL ${report}: ${f}`);
  process.exit(1);
}
