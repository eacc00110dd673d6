// Coalescing of concurrent single questions into batched asks, DataLoader style but with no timer:
// a question asked while fewer than maxInFlight batches are out goes at once (alone, if nothing
// else waits); one asked while maxInFlight batches are out waits and goes in the next batch, sent
// as soon as a batch comes back. So an idle caller pays no delay, and under load batches grow to
// what arrived during one round trip (up to maxBatch). Every question is sent only after it was
// asked, and each gets exactly its own answer (by position in the batch) or its own error.

/** One answer per question, in the order asked; an Error in a slot fails only that question. */
export type BatchSender<Q, A> = (questions: Q[]) => Promise<(A | Error)[]>;

export interface CoalescerOptions {
  /** the most questions in one batch */
  maxBatch: number;
  /** the most batches out at once */
  maxInFlight: number;
}

interface Waiting<Q, A> {
  question: Q;
  resolve(answer: A): void;
  reject(err: unknown): void;
}

export function createCoalescer<Q, A>(send: BatchSender<Q, A>, opts: CoalescerOptions): (question: Q) => Promise<A> {
  if (!(opts.maxBatch >= 1 && opts.maxInFlight >= 1)) throw new RangeError('maxBatch and maxInFlight must be at least 1');
  const queue: Waiting<Q, A>[] = [];
  let inFlight = 0;

  const dispatch = (): void => {
    while (inFlight < opts.maxInFlight && queue.length > 0) {
      const batch = queue.splice(0, opts.maxBatch);
      inFlight++;
      void ask(batch).finally(() => {
        inFlight--;
        dispatch();
      });
    }
  };

  const ask = async (batch: Waiting<Q, A>[]): Promise<void> => {
    let answers: (A | Error)[];
    try {
      answers = await send(batch.map((w) => w.question));
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    batch.forEach((w, i) => {
      const a = answers[i];
      if (i >= answers.length) w.reject(new Error(`batch answered ${answers.length} of ${batch.length} questions`));
      else if (a instanceof Error) w.reject(a);
      else w.resolve(a as A);
    });
  };

  return (question) =>
    new Promise<A>((resolve, reject) => {
      queue.push({ question, resolve, reject });
      dispatch();
    });
}
