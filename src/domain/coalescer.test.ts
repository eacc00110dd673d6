import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createCoalescer } from './coalescer.ts';

interface Sent {
  questions: number[];
  answer(answers: (string | Error)[]): void;
  fail(err: Error): void;
}

/** A sender whose batches stay out until the test answers them. */
function heldSender() {
  const out: Sent[] = [];
  const sent: Sent[] = [];
  let inFlight = 0;
  let most = 0;
  const send = (questions: number[]) =>
    new Promise<(string | Error)[]>((resolve, reject) => {
      inFlight++;
      most = Math.max(most, inFlight);
      const batch = {
        questions,
        answer: (a: (string | Error)[]) => {
          inFlight--;
          resolve(a);
        },
        fail: (e: Error) => {
          inFlight--;
          reject(e);
        },
      };
      out.push(batch);
      sent.push(batch);
    });
  return { send, out, sent, most: () => most };
}

/** Turns stepped by hand: `end()` runs what was left for the end of the current turn. */
function manualTurns() {
  let pending: (() => void)[] = [];
  return {
    endOfTurn: (cb: () => void) => void pending.push(cb),
    end: () => {
      const run = pending;
      pending = [];
      for (const cb of run) cb();
    },
    waiting: () => pending.length,
  };
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('createCoalescer', () => {
  it('answers every question with its own answer, each sent once, after it was asked, batches within both bounds', async () => {
    // each step: a new question arrives, the turn ends, or the oldest or newest batch out comes
    // back (questions weighted up so that queues longer than a batch are common)
    const step = fc.oneof(
      { arbitrary: fc.constant('ask' as const), weight: 3 },
      { arbitrary: fc.constant('turn' as const), weight: 1 },
      { arbitrary: fc.constant('oldest' as const), weight: 1 },
      { arbitrary: fc.constant('newest' as const), weight: 1 },
    );
    const steps = fc.array(step, { minLength: 1, maxLength: 80, size: 'max' });
    await fc.assert(
      fc.asyncProperty(steps, fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 3 }), async (plan, maxBatch, maxInFlight) => {
        const s = heldSender();
        const turns = manualTurns();
        const ask = createCoalescer(s.send, { maxBatch, maxInFlight, endOfTurn: turns.endOfTurn });
        const results = new Map<number, Promise<string>>();
        let asked = 0;
        const answerOne = async (which: 'oldest' | 'newest') => {
          const batch = which === 'oldest' ? s.out.shift() : s.out.pop();
          batch?.answer(batch.questions.map((q) => `answer ${q}`));
          await flush();
        };
        const unsent = () => [...results.keys()].filter((q) => !s.sent.some((b) => b.questions.includes(q)));
        for (const step of plan) {
          if (step === 'ask') {
            const q = asked++;
            const before = s.sent.length;
            results.set(q, ask(q));
            // nothing goes before the turn ends
            expect(s.sent).toHaveLength(before);
          } else if (step === 'turn') {
            const waiting = unsent();
            const room = maxInFlight - s.out.length;
            turns.end();
            // at the end of the turn what waited goes, as far as the bounds allow, oldest first
            expect(unsent()).toEqual(waiting.slice(Math.min(waiting.length, room * maxBatch)));
          } else await answerOne(step);
        }
        turns.end();
        while (s.out.length > 0) await answerOne('oldest');
        expect(turns.waiting()).toBe(0);
        for (const [q, p] of results) expect(await p).toBe(`answer ${q}`);
        const everySent = s.sent.flatMap((b) => b.questions);
        expect(everySent).toEqual([...results.keys()]);
        for (const b of s.sent) expect(b.questions.length).toBeLessThanOrEqual(maxBatch);
        expect(s.most()).toBeLessThanOrEqual(maxInFlight);
      }),
    );
  });

  it('questions asked in one turn go together when it ends; ones asked while the cap is out go together when a batch returns', async () => {
    const s = heldSender();
    const turns = manualTurns();
    const ask = createCoalescer(s.send, { maxBatch: 50, maxInFlight: 1, endOfTurn: turns.endOfTurn });
    const first = [ask(1), ask(2)];
    expect(s.sent).toHaveLength(0);
    turns.end();
    expect(s.sent.map((b) => b.questions)).toEqual([[1, 2]]);
    const later = [ask(3), ask(4), ask(5)];
    turns.end();
    expect(s.sent).toHaveLength(1);
    s.out.shift()!.answer(['a', 'b']);
    await flush();
    expect(s.sent.map((b) => b.questions)).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    s.out.shift()!.answer(['c', 'd', 'e']);
    expect(await Promise.all([...first, ...later])).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('by default a turn ends on setImmediate: an idle coalescer sends a lone question without a timer', async () => {
    const s = heldSender();
    const ask = createCoalescer(s.send, { maxBatch: 50, maxInFlight: 1 });
    const p = ask(7);
    expect(s.sent).toHaveLength(0);
    await new Promise((r) => setImmediate(r));
    expect(s.sent.map((b) => b.questions)).toEqual([[7]]);
    s.out.shift()!.answer(['seven']);
    expect(await p).toBe('seven');
  });

  it('an Error in a slot fails that question only; a failed batch fails its questions only', async () => {
    const s = heldSender();
    const turns = manualTurns();
    const ask = createCoalescer(s.send, { maxBatch: 2, maxInFlight: 1, endOfTurn: turns.endOfTurn });
    const first = ask(1);
    turns.end();
    const p = [first, ask(2), ask(3), ask(4), ask(5)].map((x) =>
      x.then(
        (v) => v,
        (e: Error) => `failed: ${e.message}`,
      ),
    );
    turns.end();
    s.out.shift()!.answer(['one']);
    await flush();
    s.out.shift()!.answer(['two', new Error('bad item')]);
    await flush();
    s.out.shift()!.fail(new Error('server down'));
    expect(await Promise.all(p)).toEqual(['one', 'two', 'failed: bad item', 'failed: server down', 'failed: server down']);
  });

  it('a question the sender left unanswered fails, and the coalescer goes on', async () => {
    const ask = createCoalescer(async (qs: number[]) => (qs.length > 1 ? ['only one'] : ['alone']), { maxBatch: 3, maxInFlight: 1 });
    await expect(ask(1)).resolves.toBe('alone');
    const [b, c] = [ask(2), ask(3)];
    await expect(b).resolves.toBe('only one');
    await expect(c).rejects.toThrow('batch answered 1 of 2 questions');
    await expect(ask(4)).resolves.toBe('alone');
  });

  it('a sender that throws at once fails its batch', async () => {
    const ask = createCoalescer(
      (): Promise<string[]> => {
        throw new Error('sync');
      },
      { maxBatch: 3, maxInFlight: 1 },
    );
    await expect(ask(1)).rejects.toThrow('sync');
  });

  it('refuses bounds below 1', () => {
    expect(() => createCoalescer(async () => [], { maxBatch: 0, maxInFlight: 1 })).toThrow(RangeError);
    expect(() => createCoalescer(async () => [], { maxBatch: 1, maxInFlight: 0 })).toThrow(RangeError);
  });
});
