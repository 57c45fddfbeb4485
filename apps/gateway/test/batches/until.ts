/**
 * The batch tests' wait for a batch to move on: `get` read again every 25 ms until `done` says
 * so, at most `tries` times; the last value either way (the caller's assertion says what failed).
 */
export async function until<T>(get: () => Promise<T>, done: (v: T) => boolean, tries = 600): Promise<T> {
  let v = await get();
  for (let i = 0; i < tries && !done(v); i++) {
    await Bun.sleep(25);
    v = await get();
  }
  return v;
}
