/**
 * `make`'s promise, made by the first call and shared by every later one, unless it rejects: a failure (a network
 * blip reading a secret, a module that did not load) is not kept, so the next call makes it again.
 */
export function onceUntilRejected<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    if (!made) {
      const attempt = make();
      made = attempt;
      attempt.catch(() => {
        if (made === attempt) made = undefined;
      });
    }
    return made;
  };
}
