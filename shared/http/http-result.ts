/** What an operation answers; the group handler turns it into API Gateway's proxy result. */
export interface HttpResult {
  readonly statusCode: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * A write each client sends on a timer (an OIDC token refresh, every 20 minutes or so a device): its success's
   * summary line is sampled like a read's (`request-summary.ts`), as the legacy session refresh's (a GET) is.
   */
  readonly routine?: true;
}
