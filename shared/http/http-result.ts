/** What an operation answers; the group handler turns it into API Gateway's proxy result. */
export interface HttpResult {
  readonly statusCode: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}
