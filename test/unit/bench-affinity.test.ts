// The admission bench's store-apart lines (bench/support-affinity.ts): which cores each side gets.
import { describe, expect, it } from 'vitest';
import { allowedCores, coresApart, maskHex } from '../../bench/support-affinity.ts';

describe('the store on cores of its own', () => {
  it('reads the cores a process may use from its cpuset, ranges and single cores alike', () => {
    expect(allowedCores('Name:\tnode\nCpus_allowed:\tcf\nCpus_allowed_list:\t0-3,6-7\n')).toEqual([0, 1, 2, 3, 6, 7]);
    expect(allowedCores('Cpus_allowed_list:\t5\n')).toEqual([5]);
    expect(() => allowedCores('Name:\tnode\n')).toThrow(/Cpus_allowed_list/);
  });

  it('gives the store the first half of them and the ledger the rest, and nothing on one core', () => {
    expect(coresApart([3])).toBeNull();
    expect(coresApart([0, 1])).toEqual({ store: [0], ledger: [1] });
    // a container's cpuset need not start at 0
    expect(coresApart([4, 5])).toEqual({ store: [4], ledger: [5] });
    expect(coresApart([0, 1, 2, 3, 6, 7])).toEqual({ store: [0, 1, 2], ledger: [3, 6, 7] });
    expect(coresApart([0, 1, 2])).toEqual({ store: [0], ledger: [1, 2] });
  });

  it('names the cores as taskset prints their mask', () => {
    expect([maskHex([1]), maskHex([0, 1]), maskHex([4, 5, 6, 7]), maskHex([64])]).toEqual(['2', '3', 'f0', '10000000000000000']);
  });
});
