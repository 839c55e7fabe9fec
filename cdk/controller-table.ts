import { type CfnResource, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AttributeType, type ITable, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Grant, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { TABLE_KEYS } from '#shared/store/table-definition.ts';
import { autoScaleTable, indexCapacityProps, type TableCapacity, tableBillingProps } from './table-capacity.ts';
import { wildcardUnderArnFinding } from './wildcard-under-arn-finding.ts';

/**
 * The controller's one table, keyed as `TABLE_KEYS` says. It holds the whole network's state, so it outlives the
 * stack: deletion protection, retained on stack deletion, point-in-time recovery. Billed on demand unless `capacity`
 * provisions it (with auto scaling).
 */
export class ControllerTable extends Table {
  constructor(scope: Construct, id: string, capacity: TableCapacity = 'on-demand') {
    super(scope, id, {
      partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
      ...tableBillingProps(capacity),
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
        ...indexCapacityProps(capacity),
      });
    }
    autoScaleTable(this, capacity);
  }
}

/**
 * The table the controller keeps its state in: a new {@link ControllerTable}, or with `tableName` an existing one (a
 * table restored from a point-in-time recovery or a backup, docs/aws-operations.md "Restoring the table"), which the stack uses but
 * does not manage: its TTL, recovery and deletion protection are the operator's, and it is never deleted.
 */
export function controllerTable(
  scope: Construct,
  id: string,
  tableName?: string,
  capacity: TableCapacity = 'on-demand',
): ITable {
  if (tableName === undefined) return new ControllerTable(scope, id, capacity);
  return Table.fromTableAttributes(scope, id, {
    tableName,
    // The grants then cover `<table>/index/*`, the indexes the store queries.
    grantIndexPermissions: true,
    globalIndexes: TABLE_KEYS.indexes.map((index) => index.name),
  });
}

/**
 * Lets `grantee` use the table and its indexes with `actions` (`tableActionsOf`: reads and writes, the scan only for
 * the integrity run), and acknowledges the `<table>/index/*` resource the grant adds to its policy: it matches only
 * this table's own global secondary indexes. With `indexes` (`tableIndexesOf`), the table and those indexes alone,
 * by name.
 */
export function grantTableData(
  table: ITable,
  grantee: IGrantable,
  actions: readonly string[],
  indexes?: readonly string[],
): Grant {
  if (indexes !== undefined) {
    const resourceArns = [table.tableArn, ...indexes.map((index) => `${table.tableArn}/index/${index}`)];
    return Grant.addToPrincipal({ grantee, actions: [...actions], resourceArns });
  }
  const grant = table.grant(grantee, ...actions);
  if (Construct.isConstruct(grantee.grantPrincipal)) {
    Validations.of(grantee.grantPrincipal).acknowledge({
      id: indexWildcardFinding(table),
      reason: "Matches only this table's own global secondary indexes, which the store queries.",
    });
  }
  return grant;
}

/** cdk-nag's id of the `<table ARN>/index/*` finding, for a table of the stack or one imported by name. */
function indexWildcardFinding(table: ITable): string {
  if (table instanceof Table) return wildcardUnderArnFinding(table.node.defaultChild as CfnResource, '/index/*');
  // The ARN an imported table's grants name (Stack.formatArn), with its pseudo parameters as cdk-nag writes them.
  return `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:dynamodb:<AWS::Region>:<AWS::AccountId>:table/${table.tableName}/index/*]`;
}
