import { PolicyDocument, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

export interface FunctionRoleProps {
  /** The function's own log group, created with the stack (so the function never needs `logs:CreateLogGroup`). */
  readonly logGroup: ILogGroup;
  readonly description: string;
}

/**
 * A Lambda execution role that may write to one log group and do nothing else until granted more. It replaces the
 * AWS-managed `AWSLambdaBasicExecutionRole`, which lets a function create and write every log group of the account.
 */
export class FunctionRole extends Role {
  constructor(scope: Construct, id: string, props: FunctionRoleProps) {
    super(scope, id, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: props.description,
      inlinePolicies: {
        Logs: new PolicyDocument({
          statements: [
            new PolicyStatement({
              actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
              // The log group's `Arn` attribute ends in `:*`, which covers its log streams and nothing else.
              resources: [props.logGroup.logGroupArn],
            }),
          ],
        }),
      },
    });
  }
}
