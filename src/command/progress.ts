import type { Reporter } from "../train/types.ts";
/**
 * Progress bars with ETA on stderr. On a terminal a bar redraws in place; otherwise (CI, a log file) it prints a
 * line at every 10% and at the end, so logs stay readable.
 */

const enc = new TextEncoder();

function clock(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "--";
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), r = s % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, "0")}m` : m > 0 ? `${m}m${String(r).padStart(2, "0")}s` : `${r}s`;
}

/** A reporter writing bars to stderr and lines to stdout. */
export function terminalReporter(o: { quiet?: boolean } = {}): Reporter {
  const tty = Deno.stderr.isTerminal();
  const write = (s: string) => Deno.stderr.writeSync(enc.encode(s));
  return {
    line(text: string) {
      if (tty) write("\r\x1b[K");
      console.log(text);
    },
    bar(label: string, total: number) {
      let done = 0, lastTenth = -1, note = "";
      const t0 = performance.now();
      let base = 0; // units already done when the bar started (a resumed run): not counted in the rate
      let first = true;
      const draw = (final = false) => {
        if (o.quiet) return;
        const frac = total > 0 ? Math.min(1, done / total) : 1;
        const elapsed = (performance.now() - t0) / 1000;
        const rate = (done - base) / Math.max(elapsed, 1e-9);
        const eta = rate > 0 ? (total - done) / rate : Infinity;
        const width = 24, fill = Math.round(frac * width);
        const text = `[${label}] ${"█".repeat(fill)}${"░".repeat(width - fill)} ${done}/${total} ` +
          `${(100 * frac).toFixed(0)}% ${final ? `in ${clock(elapsed)}` : `ETA ${clock(eta)}`}${
            note ? `  ${note}` : ""
          }`;
        if (tty) write(`\r\x1b[K${text}${final ? "\n" : ""}`);
        else {
          const tenth = Math.floor(frac * 10);
          if (final || tenth > lastTenth) {
            lastTenth = tenth;
            write(text + "\n");
          }
        }
      };
      return {
        tick(n = 1, msg?: string) {
          if (first) {
            first = false;
            base = n > 0 && done === 0 && msg === undefined ? n : 0;
          }
          done += n;
          if (msg !== undefined) note = msg;
          draw();
        },
        done(msg?: string) {
          if (msg !== undefined) note = msg;
          done = Math.max(done, total);
          draw(true);
        },
      };
    },
  };
}
