/** Maps with at most `concurrency` calls in flight: page views fan out to DynamoDB, but never 500 requests at once. */
export async function mapBounded<T, U>(
  items: readonly T[],
  concurrency: number,
  map: (item: T) => Promise<U> | U,
): Promise<U[]> {
  const results = new Array<U>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await map(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
