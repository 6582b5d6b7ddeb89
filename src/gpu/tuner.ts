/**
 * The autotuner: which variant of a kernel runs a given shape on this adapter, measured rather than guessed.
 *
 * An op asks {@linkcode Tuner.choice} for a shape's key while it records (synchronously). A miss returns nothing:
 * the op uses its seeded default (the table measured on lavapipe, or a guess for hardware) and, where this tuner
 * tunes, files a job with {@linkcode Tuner.request}. Pending jobs run at the next sync point (`Batch.read` calls
 * {@linkcode runPendingTuning}): each times its candidates on this device, keeps the fastest (the seed on a near
 * tie, so today's kernel stays where it is as good) and writes the choice to a JSON file shared by every run on this
 * machine, keyed by adapter (vendor, architecture, device, description, driver where readable, Deno's version) and
 * by the op's key, which names the kernel sources' hash and the shape. Later runs read the choice and time nothing.
 *
 * Modes (CRUCIBLE_TUNE): `auto` (default) reads the cache everywhere and times misses on hardware adapters only (a
 * CPU rasteriser's seeds are measured, and its first compiles take seconds); `on` times misses on any adapter; `off`
 * uses the seeded defaults alone, reading no cache (deterministic: the tests run this way). The cache file is
 * CRUCIBLE_KERNEL_CACHE, default $XDG_CACHE_HOME/crucible/kernels.json (~/.cache/...); `off` keeps choices in memory.
 * Clear it by deleting the file, or with `deno task bench kernels --clear-tuning`.
 */
import type { Gpu } from "./device.ts";

/** CRUCIBLE_TUNE: `auto`, `on` or `off`. */
export const TUNE_ENV = "CRUCIBLE_TUNE";
/** CRUCIBLE_KERNEL_CACHE: the cache file's path, or `off`. */
export const KERNEL_CACHE_ENV = "CRUCIBLE_KERNEL_CACHE";

/** When the tuner times candidates: see the module header. */
export type TuneMode = "auto" | "on" | "off";

/** A candidate slower than the seed by less than this share keeps the seed (timing noise is not a win). */
export const SEED_MARGIN = 0.03;

/** What one tuned key holds. */
export interface TuneChoice {
  /** The variant chosen: the fastest candidate, or the seed when none beat it by more than SEED_MARGIN. */
  variant: string;
  /** Best time of each candidate timed, ms (Infinity where it failed: out of limits, did not build). */
  ms: Record<string, number>;
  /** The op's default for this key when it was tuned. */
  seed: string;
  /** ISO date of the measurement. */
  when: string;
}

/** One key's tuning job: the candidates and how to time one. */
export interface TuneJob {
  /** Candidate variant names; the seed among them. */
  candidates: readonly string[];
  seed: string;
  /** Times one candidate on the device: its best time in ms (throws where it cannot run). */
  measure(candidate: string): Promise<number>;
  /** Called once after the candidates were timed (frees the job's inputs). */
  done?(): void;
}

/** Replaces a job's own measurement (tests: speeds told, not timed). */
export type TuneTimer = (candidate: string, key: string) => Promise<number>;

/** Options of {@linkcode configureTuner}; unset fields come from the environment. */
export interface TunerOptions {
  mode?: TuneMode;
  /** The cache file, or null for none (memory only). */
  cachePath?: string | null;
  /** Injected timing, used instead of each job's own. */
  timer?: TuneTimer;
  /** Where progress lines go (default console.error); null for silence. */
  log?: ((line: string) => void) | null;
}

/** The file's shape: choices per adapter key. */
interface CacheFile {
  version: 1;
  adapters: Record<string, { adapter: Record<string, string>; choices: Record<string, TuneChoice> }>;
}

function env(name: string): string | undefined {
  try {
    const v = Deno.env.get(name);
    return v === "" ? undefined : v;
  } catch {
    return undefined; // without --allow-env: the defaults
  }
}

/** The tune mode from CRUCIBLE_TUNE; a RangeError naming the value when it is none of auto, on, off. */
export function tuneModeFromEnv(): TuneMode {
  const v = env(TUNE_ENV)?.toLowerCase() ?? "auto";
  if (v === "auto" || v === "on" || v === "off") return v;
  throw new RangeError(`${TUNE_ENV}=${v} is not a tune mode; use auto, on or off`);
}

/** The cache file from CRUCIBLE_KERNEL_CACHE, else $XDG_CACHE_HOME (or ~/.cache)/crucible/kernels.json; null for off. */
export function kernelCachePath(): string | null {
  const v = env(KERNEL_CACHE_ENV);
  if (v?.toLowerCase() === "off") return null;
  if (v) return v;
  const home = env("HOME") ?? env("USERPROFILE");
  const base = env("XDG_CACHE_HOME") ?? (home ? `${home}/.cache` : undefined);
  return base ? `${base}/crucible/kernels.json` : null;
}

/** The NVIDIA driver's version line where Linux exposes it (WebGPU itself names no driver version). */
function driverVersion(): string | undefined {
  try {
    const line = Deno.readTextFileSync("/proc/driver/nvidia/version").split("\n")[0];
    return /Kernel Module\s+([\d.]+)/.exec(line)?.[1] ?? line.trim();
  } catch {
    return undefined;
  }
}

/** What identifies an adapter's timings: its info, its driver where readable and the runtime (which pins wgpu). */
export function adapterIdentity(gpu: Pick<Gpu, "info">): Record<string, string> {
  const i = gpu.info;
  const id: Record<string, string> = {
    vendor: i.vendor,
    architecture: i.architecture,
    device: i.device,
    description: i.description,
    deno: typeof Deno !== "undefined" ? Deno.version.deno : "unknown",
  };
  const driver = driverVersion();
  if (driver) id.driver = driver;
  return id;
}

/** The cache's key for an identity: its fields joined in a fixed order. */
export function adapterKey(id: Record<string, string>): string {
  return Object.keys(id).sort().map((k) => `${k}=${id[k]}`).join("|");
}

/** A short stable hash of text (FNV-1a, 32 bits, hex): names a kernel source's version in a key. */
export function textHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, "0");
}

function readCache(path: string | null): CacheFile {
  const empty: CacheFile = { version: 1, adapters: {} };
  if (!path) return empty;
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return empty; // no file yet (or unreadable): nothing tuned
  }
  try {
    const parsed = JSON.parse(text) as CacheFile;
    return parsed?.version === 1 && typeof parsed.adapters === "object" ? parsed : empty;
  } catch {
    return empty; // a damaged file is ignored and rewritten by the next tuning
  }
}

/** The fastest candidate, or the seed where none beats it by more than {@linkcode SEED_MARGIN}. */
export function fastest(ms: Record<string, number>, seed: string): string {
  let best = seed in ms ? seed : Object.keys(ms)[0];
  for (const [name, t] of Object.entries(ms)) if (t < ms[best]) best = name;
  const seedMs = ms[seed];
  return seedMs !== undefined && Number.isFinite(seedMs) && ms[best] > seedMs * (1 - SEED_MARGIN) ? seed : best;
}

/** One device's tuning state: the choices known, the jobs pending, the cache file. */
export class Tuner {
  readonly mode: TuneMode;
  readonly cachePath: string | null;
  readonly adapter: Record<string, string>;
  readonly key: string;
  #choices: Record<string, TuneChoice>;
  #pending = new Map<string, () => TuneJob>();
  #running = false;
  #timer?: TuneTimer;
  #log: ((line: string) => void) | null;
  #warned = false;
  /** Keys in #choices (kept, so that `active` costs nothing per lookup). */
  #count = 0;

  constructor(readonly gpu: Gpu, options: TunerOptions = {}) {
    this.mode = options.mode ?? tuneModeFromEnv();
    this.cachePath = options.cachePath !== undefined ? options.cachePath : kernelCachePath();
    this.adapter = adapterIdentity(gpu);
    this.key = adapterKey(this.adapter);
    this.#timer = options.timer;
    this.#log = options.log === undefined ? (line) => console.error(line) : options.log;
    this.#choices = this.mode === "off" ? {} : { ...readCache(this.cachePath).adapters[this.key]?.choices };
    this.#count = Object.keys(this.#choices).length;
  }

  /** Whether misses are timed on this adapter (mode on; or auto on a hardware adapter). */
  get tunes(): boolean {
    return this.mode === "on" || (this.mode === "auto" && !this.gpu.software);
  }

  /** Whether a lookup can find anything or file a job: false with no choices on an adapter this tuner does not tune. */
  get active(): boolean {
    return this.tunes || this.#count > 0;
  }

  /** The tuned variant for a key, or undefined (the op then uses its seed). Always undefined in mode off. */
  choice(key: string): string | undefined {
    return this.#choices[key]?.variant;
  }

  /** Every choice this adapter has, by key. */
  get choices(): Readonly<Record<string, TuneChoice>> {
    return this.#choices;
  }

  /** Jobs waiting for the next sync point. */
  get pending(): number {
    return this.#pending.size;
  }

  /**
   * Files a job for a missing key (once per key), made when it runs (so its inputs are allocated at the sync point,
   * not while a batch records); ignored where this tuner does not tune.
   */
  request(key: string, job: () => TuneJob): void {
    if (!this.tunes || key in this.#choices || this.#pending.has(key)) return;
    this.#pending.set(key, job);
  }

  /** Times a job's candidates now, keeps and saves the choice, and returns it. */
  async tune(key: string, job: TuneJob): Promise<TuneChoice> {
    const ms: Record<string, number> = {};
    try {
      for (const c of job.candidates) {
        try {
          ms[c] = this.#timer ? await this.#timer(c, key) : await job.measure(c);
        } catch {
          ms[c] = Infinity; // a candidate this device cannot run (limits, a shader that does not build here)
        }
      }
    } finally {
      job.done?.();
    }
    const choice: TuneChoice = { variant: fastest(ms, job.seed), ms, seed: job.seed, when: new Date().toISOString() };
    this.#choices[key] = choice;
    this.#count = Object.keys(this.#choices).length;
    this.#pending.delete(key);
    this.#save({ [key]: choice });
    return choice;
  }

  /** Runs every pending job (at a sync point); one progress line where anything was timed. */
  async runPending(): Promise<void> {
    if (this.#running || this.#pending.size === 0) return;
    this.#running = true;
    const t0 = performance.now();
    let n = 0;
    try {
      for (const [key, make] of [...this.#pending]) {
        await this.tune(key, make());
        n++;
      }
    } finally {
      this.#running = false;
    }
    const where = this.cachePath ? `saved to ${this.cachePath}` : "kept in memory";
    this.#log?.(
      `Autotuned ${n} kernel shape${n === 1 ? "" : "s"} on ${this.gpu.name} in ` +
        `${((performance.now() - t0) / 1000).toFixed(1)} s (${where}; ${TUNE_ENV}=off uses the defaults)`,
    );
  }

  /** Forgets this adapter's choices, in memory and in the file. */
  clear(): void {
    this.#choices = {};
    this.#count = 0;
    this.#pending.clear();
    if (!this.cachePath) return;
    const file = readCache(this.cachePath);
    if (!(this.key in file.adapters)) return;
    delete file.adapters[this.key];
    this.#write(file);
  }

  /** Merges new choices into the file as it is now (other runs may have added theirs). */
  #save(add: Record<string, TuneChoice>): void {
    if (!this.cachePath) return;
    const file = readCache(this.cachePath);
    const entry = file.adapters[this.key] ?? { adapter: this.adapter, choices: {} };
    entry.choices = { ...entry.choices, ...add };
    file.adapters[this.key] = entry;
    this.#write(file);
  }

  #write(file: CacheFile): void {
    const path = this.cachePath!;
    try {
      const dir = path.replace(/[/\\][^/\\]*$/, "");
      if (dir && dir !== path) Deno.mkdirSync(dir, { recursive: true });
      const tmp = `${path}.${Deno.pid}.tmp`;
      Deno.writeTextFileSync(tmp, JSON.stringify(file, (_k, v) => v === Infinity ? null : v, 1) + "\n");
      Deno.renameSync(tmp, path);
    } catch (e) {
      if (this.#warned) return;
      this.#warned = true;
      this.#log?.(`Could not write the kernel cache ${path} (${(e as Error).message}); choices stay in memory`);
    }
  }
}

const tuners = new WeakMap<GPUDevice, Tuner>();

/** The device's tuner, created on first use from the environment. */
export function tunerOf(gpu: Gpu): Tuner {
  let t = tuners.get(gpu.device);
  if (!t) tuners.set(gpu.device, t = new Tuner(gpu));
  return t;
}

/**
 * Replaces the device's tuner (tests, `bench kernels --tune`): choices already made in memory are dropped; the
 * cache file is read again under the new settings.
 */
export function configureTuner(gpu: Gpu, options: TunerOptions): Tuner {
  const t = new Tuner(gpu, options);
  tuners.set(gpu.device, t);
  return t;
}

/** Runs the device's pending tuning jobs, if any (called at sync points). */
export async function runPendingTuning(gpu: Gpu): Promise<void> {
  const t = tuners.get(gpu.device);
  if (t && t.pending > 0) await t.runPending();
}
