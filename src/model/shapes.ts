/**
 * The dimension letters used in every shader header, host comment and test.
 *
 * | letter | meaning                                                           |
 * | ------ | ----------------------------------------------------------------- |
 * | B      | batch: sequences in a packed batch                                 |
 * | T      | time: tokens; in a packed batch, all tokens of all sequences       |
 * | C      | channels: the model width (hidden_size)                           |
 * | I      | intermediate width of the MLP (intermediate_size)                 |
 * | V      | vocabulary size                                                   |
 * | H      | query heads                                                       |
 * | KV     | key/value heads (grouped-query attention: H is a multiple of KV)   |
 * | D      | head dimension                                                    |
 * | L      | layers                                                            |
 * | S      | key/value rows visible to a query (cache length)                  |
 * | M,N,K  | matmul: out [M, N] = A [M, K] · B [K, N] before transposition      |
 *
 * Layouts are row-major with the last letter contiguous: `[T, H, D]` puts head h of token t at `(t * H + h) * D`.
 */
export const DIMENSION_LETTERS = ["B", "T", "C", "I", "V", "H", "KV", "D", "L", "S", "M", "N", "K"] as const;

/** One of the shared dimension letters. */
export type DimensionLetter = typeof DIMENSION_LETTERS[number];
