import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AttributeType, BillingMode, type CfnTable, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import type { Grant, IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { TABLE_KEYS } from '#shared/store/table-definition.ts';
import { wildcardUnderArnFinding } from './wildcard-under-arn-finding.ts';

/**
 * The controller's one table, keyed as `TABLE_KEYS` says. It holds the whole network's state, so it outlives the
 * stack: deletion protection, retained on stack deletion, point-in-time recovery.
 */
export class ControllerTable extends Table {
  constructor(scope: Construct, id: string) {
    super(scope, id, {
      partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE_KEYS.ttlAttribute,
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of TABLE_KEYS.indexes) {
      this.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: index.projection === 'ALL' ? ProjectionType.ALL : ProjectionType.KEYS_ONLY,
      });
    }
  }

  /** Also acknowledges the `<table>/index/*` resource the grant adds to the grantee's policy. */
  override grantReadWriteData(grantee: IGrantable): Grant {
    const grant = super.grantReadWriteData(grantee);
    if (Construct.isConstruct(grantee.grantPrincipal)) {
      Validations.of(grantee.grantPrincipal).acknowledge({
        id: wildcardUnderArnFinding(this.node.defaultChild as CfnTable, '/index/*'),
        reason: "Matches only this table's own global secondary indexes, which the store queries.",
      });
    }
    return grant;
  }
}
