import { ApiError } from '../errors/api-error.ts';

/**
 * What a load balancer takes from a Lambda target: "The maximum size of the response JSON that the Lambda function
 * can send is 1 MB" (AWS, "Use Lambda functions as targets of an Application Load Balancer"), read as 10^6 bytes, the
 * smaller meaning of MB. A page of 500 entities does not fit when they average 2 KB, and one entity may weigh far more
 * (tags and app data up to 64 KB each).
 */
export const ALB_RESPONSE_BYTES = 1_000_000;

/** Lambda's own bound on a synchronous invocation's response (6 MB), the one that holds behind API Gateway. */
export const LAMBDA_RESPONSE_BYTES = 6_000_000;

// Room for what wraps the body in the response JSON: the status, the headers (the instance id is added after the body
// is sized), the load balancer's status description.
const ROOM_AROUND_BODY = 16 * 1024;

interface ListPage {
  readonly data: readonly unknown[];
  readonly meta: { readonly pagination: { readonly limit: number; readonly offset: number } };
}

function isListPage(body: unknown): body is ListPage {
  const page = body as Partial<ListPage> | null;
  return Array.isArray(page?.data) && typeof page?.meta?.pagination?.limit === 'number';
}

/** What text weighs inside the response JSON, where it is a JSON string itself (quotes and backslashes escaped). */
function embeddedBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text)) - 2;
}

function tooLarge(bound: number): ApiError {
  return new ApiError('RESPONSE_TOO_LARGE', {
    cause: { message: `the answer would be larger than the ${bound} bytes the front door carries` },
  });
}

/**
 * The JSON text of a body that fits in a response of `bound` bytes. A list page that does not is cut to the entities
 * that fit, and its `meta.pagination.limit` says how many it holds: a client that pages on from `offset + limit` (or
 * from the count it received) gets the rest on the next pages, with `totalCount` unchanged. Anything else too large,
 * or a page whose first entity alone is, is a 500 `RESPONSE_TOO_LARGE` in the envelope rather than an answer the
 * front door would break.
 */
export function bodyTextWithin(body: unknown, bound: number): string {
  const text = JSON.stringify(body);
  const budget = bound - ROOM_AROUND_BODY;
  if (embeddedBytes(text) <= budget) return text;
  if (!isListPage(body)) throw tooLarge(bound);
  let used = embeddedBytes(JSON.stringify({ ...body, data: [] }));
  let kept = 0;
  for (const entity of body.data) {
    const size = embeddedBytes(JSON.stringify(entity)) + (kept > 0 ? 1 : 0);
    if (used + size > budget) break;
    used += size;
    kept++;
  }
  if (kept === 0) throw tooLarge(bound);
  const meta = { ...body.meta, pagination: { ...body.meta.pagination, limit: kept } };
  return JSON.stringify({ ...body, data: body.data.slice(0, kept), meta });
}

/**
 * Whether a finished response fits in `bound` bytes of response JSON: the last check, for what no body sizing saw.
 * Every response passes here, so most are not serialised again to be measured: a character of the body weighs at
 * most 6 bytes in the response JSON (`\u001f`), and a body whose worst case fits, with its headers, fits.
 */
export function fitsWithin(
  result: { body?: string; headers?: unknown; multiValueHeaders?: unknown },
  bound: number,
): boolean {
  const headerBytes = Buffer.byteLength(JSON.stringify(result.headers ?? result.multiValueHeaders ?? {}));
  if (6 * (result.body?.length ?? 0) + headerBytes + ROOM_AROUND_BODY <= bound) return true;
  return Buffer.byteLength(JSON.stringify(result)) <= bound;
}

/** The bound a response must keep to, by who takes it. */
export function responseBound(fromLoadBalancer: boolean): number {
  return fromLoadBalancer ? ALB_RESPONSE_BYTES : LAMBDA_RESPONSE_BYTES;
}
