/**
 * The LM head over the final normalised hidden states, in row chunks so that full logits never exist at once:
 * per chunk, logits = nf · Wᵀ, then per-token log-probability of the target, entropy and log-sum-exp; when
 * training, the loss gradient per token comes from the caller and the chunk's dlogits (written over its logits)
 * flow into dnf and the head's weight gradient before the next chunk reuses the buffer.
 *
 * A head past the GPU's tensor limit is held in vocabulary chunks (row parts of W, src/gpu/split.ts): each writes
 * its columns of the chunk's logits, so the softmax still sees whole rows, and the backward reads dlogits back part
 * by part (linear.ts). Logits are never split: a chunk of rows is sized to bind.
 */
import type { Batch } from "../gpu/batch.ts";
import type { StoredTensor } from "../gpu/split.ts";
import type { Tensor } from "../gpu/tensor.ts";
import { logprobBackward, logprobForward } from "../ops/logprob.ts";
import { act, linear, linearBackward } from "./linear.ts";

/** One chunk of rows handed to the loss: views of the per-token outputs for rows [start, start + count). */
export interface HeadChunk {
  /** The chunk's first row (token) in the packed batch. */
  start: number;
  /** Rows in the chunk. */
  count: number;
  /** [count] f32: the log-probability of each row's target under softmax(logits / temperature). */
  logp: Tensor;
  /** [count] f32: the entropy of each row's softmax(logits / temperature). */
  entropy: Tensor;
}

/** Gradients of the loss with respect to one chunk's logp and entropy ([count] f32 each). */
export interface HeadChunkGrad {
  /** [count] f32: d loss / d logp of each row. */
  dlogp: Tensor;
  /** [count] f32: d loss / d entropy of each row. */
  dentropy: Tensor;
}

/**
 * Records, for a chunk, the per-token gradient of the loss. Called after the chunk's logp and entropy are
 * recorded, so it may compute from them on the GPU (a policy-gradient loss does).
 */
export type HeadGrad = (batch: Batch, chunk: HeadChunk) => HeadChunkGrad;

/** Arguments of {@linkcode headPass}. */
export interface HeadArgs {
  /** Final normalised hidden states [T, C]. */
  nf: Tensor;
  /** Output projection [V, C], whole or split by vocabulary rows (each part writes its columns of the logits). */
  head: StoredTensor;
  /** [T] u32 target ids. */
  targets: Tensor;
  /** Outputs [T] f32, written. */
  logp: Tensor;
  entropy: Tensor;
  temperature?: number;
  /** Training: the loss gradient, dnf [T, C] (written) and the head's weight gradient (accumulated; absent: frozen). */
  grad?: HeadGrad;
  dnf?: Tensor;
  dHead?: StoredTensor;
  /** Inference only: keep the full logits [T, V] here (tests, debugging) instead of a reused chunk buffer. */
  logits?: Tensor;
}

/** Rows per chunk: a multiple of 64 (keeps views aligned to 256 bytes) with logits under ~128 MiB. */
export function headChunkRows(T: number, V: number, maxBindingBytes: number): number {
  const budget = Math.min(maxBindingBytes, 128 * 1024 * 1024);
  const rows = Math.max(64, Math.floor(budget / (V * 4) / 64) * 64);
  return Math.min(rows, T);
}

/** Records the chunked head pass. */
export function headPass(batch: Batch, a: HeadArgs): void {
  const [T, C] = a.nf.shape;
  const V = a.head.shape[0];
  if (a.logits && a.grad) throw new TypeError("The head keeps full logits only without gradients");
  const R = a.logits ? T : headChunkRows(T, V, batch.gpu.limits.maxStorageBufferBindingSize);
  const logits = a.logits ?? act(batch, [R, V], "logits chunk");
  for (let start = 0; start < T; start += R) {
    const count = Math.min(R, T - start);
    const rows = (t: Tensor, width = 1) => t.view(start * width, width === 1 ? [count] : [count, width]);
    const x = rows(a.nf, C);
    const z = count === R ? logits : logits.view(0, [count, V]);
    linear(batch, x, a.head, z);
    const lse = act(batch, [count]);
    const chunk = { start, count, logp: rows(a.logp), entropy: rows(a.entropy) };
    const target = rows(a.targets);
    logprobForward(batch, { logits: z, target, ...chunk, lse, temperature: a.temperature });
    if (a.grad) {
      const g = a.grad(batch, chunk);
      logprobBackward(batch, {
        logits: z,
        target,
        lse,
        entropy: chunk.entropy,
        dlogp: g.dlogp,
        dentropy: g.dentropy,
        temperature: a.temperature,
      });
      linearBackward(batch, { dy: z, x, w: a.head, dx: rows(a.dnf!, C), dw: a.dHead });
    }
    lse.release();
  }
  if (!a.logits) logits.release();
}
