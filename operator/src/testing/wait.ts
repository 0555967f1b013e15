/** Polls `check` until it holds or `timeoutMs` passes (then throws with `what`). No fixed sleeps in tests. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  {
    timeoutMs = 10_000,
    intervalMs = 10,
    what = 'condition',
  }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
