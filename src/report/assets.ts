/**
 * The report page's style and script, gathered as text at build time so report.html carries everything it needs.
 *
 * Charts are drawn by uPlot 1.6.32 (MIT, about 50 KB minified; npm package `uplot`, files dist/uPlot.iife.min.js and
 * dist/uPlot.min.css), kept as a checked-in copy in ./vendor/ with its license. A copy rather than an npm import:
 * a text import of a file inside an npm package depends on how Deno lays out npm packages (node_modules or the global
 * cache) and adds an npm download to the run path, while a file beside this module is a plain text import that
 * `deno task bundle` and `deno task compile` embed like the shaders, so dist/crucible.js writes reports from any
 * folder, offline. The two vendor files are upstream's bytes with one `deno-fmt-ignore-file` (and, for the script,
 * `deno-lint-ignore-file`) comment line prepended. To update: `npm pack uplot@VERSION`, copy the two dist files and
 * LICENSE, prepend the same comment lines.
 *
 * The page's own code is plain browser JavaScript in charts.js (the controls and every chart) and
 * browser.js (the evaluation table, the episode browser and the summary), run in that order.
 */
import uplotScript from "./vendor/uplot.iife.min.js" with { type: "text" };
import uplotStyle from "./vendor/uplot.min.css" with { type: "text" };
import pageStyle from "./page.css" with { type: "text" };
import chartsScript from "./charts.js" with { type: "text" };
import browserScript from "./browser.js" with { type: "text" };

/** The page's CSS: uPlot's, then the page's own (which never sets a legend's colour: each series sets its own). */
export const reportStyle: string = `${uplotStyle}\n${pageStyle}`;

/** The page's script: uPlot (defines the global `uPlot`), then the page's code. `</script` never occurs in it. */
export const reportScript: string = [uplotScript, chartsScript, browserScript].join("\n;\n").replace(
  /<\/script/gi,
  "<\\/script",
);

/**
 * The charts alone, for a live page that draws them as its run goes (the studio): uPlot, then charts.js, which
 * defines `reportCharts.redraw(data)`. It reads the same elements as the report: `#data`, `#charts`, `#smoothing`,
 * `#smoothing-value` and the `x-axis` radios.
 */
export const chartsOnlyScript: string = [uplotScript, chartsScript].join("\n;\n");
