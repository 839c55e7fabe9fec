import { type CfnResource, Stack } from 'aws-cdk-lib';

/**
 * The id of cdk-nag's `AwsSolutions-IAM5` finding for a policy resource that is `resource`'s ARN followed by a
 * wildcard `suffix` (`/index/*`, `:*`), as cdk-nag renders it (`<LogicalId.Arn>/index/*`), to acknowledge exactly that
 * wildcard and no other.
 */
export function wildcardUnderArnFinding(resource: CfnResource, suffix: string): string {
  const logicalId: unknown = Stack.of(resource).resolve(resource.logicalId);
  return `AwsSolutions-IAM5[Resource::<${String(logicalId)}.Arn>${suffix}]`;
}
