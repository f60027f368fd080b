// SVG text contrast, which axe does not check: every visible <text> in every
// lesson's views, at desktop and phone width, against what is drawn behind
// its centre (the topmost filled shape painted before it that holds the
// point, found exactly with isPointInFill, else the page or panel's
// background), its fill and the shapes' opacities composited; WCAG's
// contrast ratio at least 4.5:1. Lesson 7 is walked phase by phase (its
// reloc tree, once dropped, was drawn ink on black: 1.44:1).
import { expect, test, type Page } from '@playwright/test';

const LESSONS = ['01-cow-btree', '02-fsync-log-tree', '03-ordered-extents-fast-fsync', '04-leaf-locks', '05-space-reclaim', '06-snapshots', '07-relocation'];
const MIN = 4.5;

/** Each visible SVG text under 4.5:1 on the page as it is: "ratio: text (fill on background) in where". */
async function lowContrast(page: Page): Promise<string[]> {
  return page.evaluate((min) => {
    type RGBA = [number, number, number, number];
    const parse = (c: string): RGBA | null => {
      const m = /^rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)$/.exec(c.trim());
      return m ? [Number(m[1]), Number(m[2]), Number(m[3]), m[4] === undefined ? 1 : Number(m[4])] : null;
    };
    const over = (top: RGBA, below: RGBA): RGBA => {
      const a = top[3];
      return [top[0] * a + below[0] * (1 - a), top[1] * a + below[1] * (1 - a), top[2] * a + below[2] * (1 - a), 1];
    };
    const lum = ([r, g, b]: RGBA) => {
      const f = (v: number) => {
        const s = v / 255;
        return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const ratio = (a: RGBA, b: RGBA) => {
      const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
      return (x + 0.05) / (y + 0.05);
    };
    /** The opacity an element is painted with: its own and its ancestors' up to the svg. */
    const opacityOf = (el: Element) => {
      let o = 1;
      for (let e: Element | null = el; e && e.tagName.toLowerCase() !== 'html'; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
      return o;
    };
    /** The HTML background behind el: the first ancestor with one, composited over those below it. */
    const htmlBackground = (el: Element): RGBA => {
      const layers: RGBA[] = [];
      for (let e: Element | null = el; e; e = e.parentElement) {
        const c = parse(getComputedStyle(e).backgroundColor);
        if (c && c[3] > 0) {
          layers.push(c);
          if (c[3] >= 1) break;
        }
      }
      return layers.reduceRight((below, top) => over(top, below), [255, 255, 255, 1] as RGBA);
    };
    const hidden = (el: Element) => !!el.closest('defs, marker, clipPath, mask, pattern, symbol');
    const out: string[] = [];
    for (const svg of document.querySelectorAll('svg')) {
      if (hidden(svg) || !svg.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
      const shapes = [...svg.querySelectorAll<SVGGeometryElement>('rect, circle, ellipse, path, polygon')].filter((s) => !hidden(s));
      for (const text of svg.querySelectorAll<SVGTextElement>('text')) {
        if (hidden(text) || !text.textContent?.trim() || !text.checkVisibility({ opacityProperty: true, visibilityProperty: true })) continue;
        const box = text.getBoundingClientRect();
        if (box.width < 1 || box.height < 1) continue;
        const style = getComputedStyle(text);
        const fill = parse(style.fill);
        if (!fill) continue; // no fill, or a gradient
        const alpha = fill[3] * Number(style.fillOpacity) * opacityOf(text);
        const cx = box.left + box.width / 2, cy = box.top + box.height / 2;
        // the shapes painted before the text that hold its centre, bottom first
        const under = shapes.filter((s) => {
          if (!(s.compareDocumentPosition(text) & Node.DOCUMENT_POSITION_FOLLOWING) || s.contains(text)) return false;
          const c = parse(getComputedStyle(s).fill);
          if (!c || c[3] === 0 || !s.checkVisibility({ opacityProperty: true, visibilityProperty: true })) return false;
          const m = s.getScreenCTM();
          if (!m) return false;
          const p = new DOMPoint(cx, cy).matrixTransform(m.inverse());
          return s.isPointInFill(p);
        });
        let bg = htmlBackground(svg);
        for (const s of under) {
          const st = getComputedStyle(s);
          const c = parse(st.fill)!;
          bg = over([c[0], c[1], c[2], c[3] * Number(st.fillOpacity) * opacityOf(s)], bg);
        }
        // a halo (a stroke painted under the fill) is the text's own background
        const halo = parse(style.stroke);
        if (halo && halo[3] > 0 && parseFloat(style.strokeWidth) >= 2 && style.paintOrder.startsWith('stroke')) bg = over(halo, bg);
        const fg = over([fill[0], fill[1], fill[2], alpha], bg);
        const r = ratio(fg, bg);
        if (r < min) {
          const where = text.closest('[aria-label], [data-testid], section')?.getAttribute('aria-label') ?? text.closest('[data-testid]')?.getAttribute('data-testid') ?? svg.className.baseVal;
          const rgb = (c: RGBA) => `rgb(${c.slice(0, 3).map(Math.round).join(',')})`;
          out.push(`${r.toFixed(2)}: "${text.textContent.trim().slice(0, 40)}" (${rgb(fg)} on ${rgb(bg)}) in ${String(where).slice(0, 60)}`);
        }
      }
    }
    return [...new Set(out)];
  }, MIN);
}

async function open(page: Page, lesson: string, step?: number) {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`./?lesson=${lesson}${step !== undefined ? `&step=${step}` : ''}`);
  await expect(page.getByTestId('sentence').first()).not.toBeEmpty();
  await expect(page.locator('svg text').first()).toBeVisible();
  await page.waitForTimeout(200); // transitions (reduced motion: short) end
}

const SIZES = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
];

for (const size of SIZES) {
  test.describe(`SVG text contrast at ${size.name} width`, () => {
    test.use({ viewport: { width: size.width, height: size.height } });

    for (const lesson of LESSONS) {
      test(`${lesson}: every SVG text at 4.5:1 or more, at its first, middle and last step`, async ({ page }) => {
        await open(page, lesson);
        const last = Number(await page.getByRole('slider', { name: 'Step', exact: true }).getAttribute('max'));
        const found: string[] = [];
        for (const step of [...new Set([0, Math.floor(last / 2), last])]) {
          if (step) await open(page, lesson, step);
          found.push(...(await lowContrast(page)).map((s) => `step ${step}: ${s}`));
        }
        expect(found).toEqual([]);
      });
    }

    test('07-relocation: the relocation picture at each phase, the dropped reloc tree included', async ({ page }) => {
      await open(page, '07-relocation', 14);
      const panel = page.getByRole('region', { name: 'Relocation: reloc trees and the subtree swap' });
      await expect(panel).toHaveAttribute('data-ready', 'true');
      await panel.getByRole('slider', { name: 'Relocation event' }).fill('0');
      const found: string[] = [];
      const phases: string[] = [];
      let kinds = '';
      for (;;) {
        const next = panel.getByRole('button', { name: 'Next phase', exact: true });
        if (await next.isDisabled()) break;
        const was = await panel.getAttribute('data-at');
        await next.click();
        await expect(panel).not.toHaveAttribute('data-at', was!);
        const phase = (await panel.locator('.reloc-phases li[aria-current="step"]').textContent()) ?? '';
        phases.push(phase);
        kinds += (await panel.locator('g.r-root').evaluateAll((els) => els.map((e) => e.getAttribute('data-kind')).join(' '))) + ';';
        found.push(...(await lowContrast(page)).map((s) => `${phase}: ${s}`));
      }
      expect(phases).toContain('Reloc trees dropped');
      expect(kinds).toContain('gone'); // the dropped reloc tree was drawn, and checked
      expect(found).toEqual([]);
    });
  });
}
