// The coordination bench's floor: a workflow that runs `count` activities, `parallel` at a time,
// with no pacing, no slicing, no signals and no report.
import { proxyActivities } from '@temporalio/workflow';

const { noop } = proxyActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: 60_000 });

export async function bareActivities(count: number, parallel: number): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      next += 1;
      await noop();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, parallel) }, lane));
}
