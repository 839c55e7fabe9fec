import { readFileSync } from 'node:fs';

/**
 * The feature flags of `cdk.json`: an in-process `App` does not read it (the CLI passes it in), and a template
 * synthesised under other flags is not the one that deploys.
 */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return cdkJson.context ?? {};
}
