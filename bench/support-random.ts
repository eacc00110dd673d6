// Deterministic pseudo-random numbers for the benches: the same sequence every run, so a figure
// moves with the code and the machine, not with the draw.

/** An LCG: 32-bit unsigned integers, from `seed`. */
export function lcg(seed: number): () => number {
  let x = seed * 2654435761 + 1;
  return () => (x = (x * 1103515245 + 12345) >>> 0);
}

/** Numbers in [0, 1), from `seed`. */
export function uniform(seed: number): () => number {
  const next = lcg(seed);
  return () => next() / 2 ** 32;
}
