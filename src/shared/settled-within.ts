/** Waits for `promise` to settle, or `ms`, whichever comes first. */
export async function settledWithin(promise: Promise<unknown> | undefined, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([promise?.catch(() => undefined), timeout]);
  clearTimeout(timer);
}
