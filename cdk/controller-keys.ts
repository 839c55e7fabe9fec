import { ArnFormat, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  AccountRootPrincipal,
  type IRole,
  PolicyDocument,
  PolicyStatement,
  ServicePrincipal,
} from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { CfnSecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { SignerRole } from '#shared/ports/signer.ts';
import type { OperationGroup } from '#shared/routes/route.ts';

/** The two CA keys, which live in KMS; the server key lives in a secret (`serverKey`). */
type CaKeyRole = Exclude<SignerRole, 'server'>;

/** The environment variable that hands each key to the functions that sign with it (`shared/config.ts`). */
export const KEY_ID_ENV: Readonly<Record<SignerRole, string>> = {
  rootCa: 'ROOT_CA_KEY_ID',
  signingCa: 'SIGNING_CA_KEY_ID',
  server: 'SERVER_KEY_SECRET_ARN',
};

/**
 * Which operation groups sign with which key. Only these get `kms:Sign` and `kms:GetPublicKey` on a CA key (key
 * policy and role), or may read the server key's secret: identities and routers sign the enrollment JWTs of what
 * they create (with the server key); sessions signs the session JWTs routers check; authentication derives the API
 * session token key from the server key (`shared/auth/api-session-token-key.ts`: a login's token is the key's MAC of
 * the session id, which the routers' control channel endpoint derives again for the routers); pki signs the
 * challenge, the network and CA JWTs, and (with the signing CA) the certificates it issues. The bootstrap function
 * signs the CA and server certificates and makes the server key.
 */
export const SIGNING_GROUPS: Readonly<Partial<Record<OperationGroup, readonly SignerRole[]>>> = {
  authentication: ['server'],
  identities: ['server'],
  routers: ['server'],
  sessions: ['server'],
  pki: ['signingCa', 'server'],
};
export const BOOTSTRAP_KEYS: readonly SignerRole[] = ['rootCa', 'signingCa', 'server'];

/** The operation groups that seal or open stored secrets (TOTP seeds): only these get the secrets key. */
export const SECRET_GROUPS: readonly OperationGroup[] = ['authentication'];
/** The environment variable naming the secrets key to them (`shared/config.ts`). */
export const SECRET_KEY_ENV = 'SECRET_KEY_ID';

const DESCRIPTIONS: Readonly<Record<CaKeyRole, string>> = {
  rootCa: 'Ziti controller: network root CA key (signs the signing CA certificate)',
  signingCa: 'Ziti controller: network signing CA key (issues identity, router, ephemeral and server certificates)',
};

/**
 * What the account's administrators may do with a key, named one by one: nothing that uses it, and no way to let
 * anyone use it. No `CreateGrant` (a grant lets its grantee sign or decrypt, whatever the key policy says, which is
 * what the `kms:Create*` wildcard would allow), and no `Sign`, `Decrypt`, `Encrypt`, `ReEncrypt*` or
 * `GenerateDataKey*`.
 *
 * `PutKeyPolicy` stays, for the account (an IAM policy must still allow it to a principal): KMS refuses to create a
 * key whose policy would not let the creator put a policy on it afterwards (its lockout safety check), CloudFormation
 * changes a key's policy with `PutKeyPolicy` as the deploying role, and without it nobody could ever change the policy
 * again (AWS support aside). Whoever an IAM policy allows `kms:PutKeyPolicy` on these keys can give themselves their
 * use: keep it to the deploying role and the account's administrators.
 */
const ADMINISTRATION = [
  'kms:DescribeKey',
  'kms:GetKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:ListGrants',
  'kms:ListKeyPolicies',
  'kms:ListKeyRotations',
  'kms:ListResourceTags',
  'kms:PutKeyPolicy',
  'kms:EnableKey',
  'kms:DisableKey',
  'kms:EnableKeyRotation',
  'kms:DisableKeyRotation',
  'kms:UpdateKeyDescription',
  'kms:CreateAlias',
  'kms:UpdateAlias',
  'kms:DeleteAlias',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:RevokeGrant',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
];

/** What Secrets Manager does with a secret's key on a caller's behalf: data keys for new values, opening them. */
const SECRETS_MANAGER_KEY_USE = ['kms:Decrypt', 'kms:Encrypt', 'kms:GenerateDataKey'];

/**
 * The network's keys. The two CA keys are asymmetric `ECC_NIST_P256` `SIGN_VERIFY` KMS keys whose private halves
 * never leave KMS; the key policy lets the account administer a key but not sign with it (so no IAM policy elsewhere
 * can grant `kms:Sign`); only the roles named with {@link grantSigning} may sign and read the public key.
 *
 * The server key (the TLS server certificate's, which also signs enrollment JWTs) must be held by whoever serves TLS
 * (ACM) and signs JWTs, so it is a P-256 key the bootstrap generates inside its function and keeps in a Secrets
 * Manager secret encrypted under a customer KMS key whose policy lets only the signing functions' roles decrypt
 * through Secrets Manager; it is never printed or returned.
 *
 * Rotation: KMS does not rotate asymmetric keys. Rotating a CA key means a new key and a new CA certificate (every
 * issued certificate chains to it), so keys are retained when the stack is deleted and are replaced only
 * deliberately. The server certificate is renewed with the same key (JWTs stay valid); a new server key is a
 * deliberate rotation after which outstanding enrollments are refreshed (docs/sdk-trust.md).
 */
export class ControllerKeys extends Construct {
  readonly keys: Readonly<Record<CaKeyRole, Key>>;
  /**
   * The secret holding the server key (PKCS#8 PEM) and the customer key it is encrypted under. An L1 secret: the L2
   * one would add a key policy statement letting every principal of the account decrypt through Secrets Manager.
   */
  readonly serverKey: CfnSecret;
  readonly serverKeyEncryption: Key;
  /**
   * The symmetric key of the envelope encryption of stored secrets: each TOTP seed is sealed with its own data key
   * from `GenerateDataKey`, opened with `Decrypt`. KMS rotates it yearly (old versions keep decrypting).
   */
  readonly secrets: Key;
  /**
   * The key every function's log group is encrypted under: CloudWatch Logs may use it for the log groups of the
   * stack's account and region (the encryption context names the log group), nobody else may.
   */
  readonly logs: Key;
  /** The key the admin password secret is encrypted under, in place of Secrets Manager's AWS-managed key. */
  readonly adminPasswordEncryption: Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const key = (role: CaKeyRole, keyId: string) =>
      new Key(this, keyId, {
        description: DESCRIPTIONS[role],
        keySpec: KeySpec.ECC_NIST_P256,
        keyUsage: KeyUsage.SIGN_VERIFY,
        removalPolicy: RemovalPolicy.RETAIN,
        policy: new PolicyDocument({
          statements: [
            new PolicyStatement({
              sid: 'AccountAdministersButDoesNotSign',
              principals: [new AccountRootPrincipal()],
              actions: ADMINISTRATION,
              resources: ['*'],
            }),
          ],
        }),
      });
    this.keys = {
      rootCa: key('rootCa', 'RootCaKey'),
      signingCa: key('signingCa', 'SigningCaKey'),
    };
    this.serverKeyEncryption = this.symmetricKey(
      'ServerKeyEncryptionKey',
      'Ziti controller: encrypts the server key secret (TLS server certificate and enrollment JWT key)',
    );
    this.serverKey = new CfnSecret(this, 'ServerKey', {
      description: 'Ziti controller: the server key (PKCS#8 PEM), made and kept by the bootstrap',
      kmsKeyId: this.serverKeyEncryption.keyArn,
      // A placeholder the bootstrap replaces with the key it generates inside its function on the first deploy.
      generateSecretString: { passwordLength: 32, excludePunctuation: true },
    });
    this.serverKey.applyRemovalPolicy(RemovalPolicy.RETAIN);
    this.lettingCloudFormationCreateSecrets(this.serverKeyEncryption);
    Validations.of(this.serverKey).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The server key signs every enrollment JWT and SDKs verify JWTs against the TLS certificate of that key, so a ' +
        'scheduled rotation would invalidate every outstanding enrollment. Its certificate is renewed (same key) by ' +
        'the bootstrap on every deploy and daily; a new key is a deliberate rotation described in docs/aws.md.',
    });
    this.secrets = this.symmetricKey(
      'SecretsKey',
      'Ziti controller: envelope key of stored secrets (TOTP seeds and recovery codes)',
    );

    const stack = Stack.of(this);
    this.logs = this.symmetricKey('LogsKey', "Ziti controller: encrypts the functions' log groups");
    this.logs.addToResourcePolicy(
      new PolicyStatement({
        sid: 'CloudWatchLogsEncryptsTheAccountsLogGroups',
        principals: [new ServicePrincipal(`logs.${stack.region}.amazonaws.com`)],
        actions: ['kms:Encrypt*', 'kms:Decrypt*', 'kms:ReEncrypt*', 'kms:GenerateDataKey*', 'kms:Describe*'],
        resources: ['*'],
        // The log groups' names are CloudFormation's, known only once made, and naming them here would make the
        // key and the log groups depend on each other: any log group of the account and region, nothing else.
        conditions: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': stack.formatArn({
              service: 'logs',
              resource: 'log-group',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );

    this.adminPasswordEncryption = this.symmetricKey(
      'AdminPasswordEncryptionKey',
      "Ziti controller: encrypts the default admin's password secret",
    );
    this.lettingCloudFormationCreateSecrets(this.adminPasswordEncryption);
  }

  /**
   * CloudFormation creates a secret with its first, generated value (the admin password; the server key's placeholder),
   * and Secrets Manager makes the data key for it as the deploying role: the account may use such a key through
   * Secrets Manager only, so a principal needs both an IAM grant of the key and the secret's own permissions to read it.
   */
  private lettingCloudFormationCreateSecrets(key: Key): void {
    const stack = Stack.of(this);
    key.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AccountUsesThroughSecretsManagerOnly',
        principals: [new AccountRootPrincipal()],
        actions: SECRETS_MANAGER_KEY_USE,
        resources: ['*'],
        conditions: {
          StringEquals: {
            'kms:ViaService': `secretsmanager.${stack.region}.amazonaws.com`,
            'kms:CallerAccount': stack.account,
          },
        },
      }),
    );
  }

  /**
   * Lets `role` read and write the admin password secret's value (the bootstrap, which reads it on deploy and is its
   * rotation function), through Secrets Manager only.
   */
  grantAdminPassword(role: IRole): void {
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: SECRETS_MANAGER_KEY_USE,
        resources: [this.adminPasswordEncryption.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `secretsmanager.${Stack.of(this).region}.amazonaws.com` } },
      }),
    );
  }

  /**
   * A retained symmetric key KMS rotates yearly, whose policy lets the account administer it but not use it: only the
   * roles the grants below name may encrypt or decrypt with it.
   */
  private symmetricKey(id: string, description: string): Key {
    return new Key(this, id, {
      description,
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
      policy: new PolicyDocument({
        statements: [
          new PolicyStatement({
            sid: 'AccountAdministersButDoesNotDecrypt',
            principals: [new AccountRootPrincipal()],
            actions: ADMINISTRATION,
            resources: ['*'],
          }),
        ],
      }),
    });
  }

  /** Lets `role` make data keys under the secrets key and decrypt them; answers the environment naming the key. */
  grantSecrets(role: IRole): Record<string, string> {
    const actions = ['kms:GenerateDataKey', 'kms:Decrypt'];
    this.secrets.addToResourcePolicy(new PolicyStatement({ principals: [role], actions, resources: ['*'] }));
    role.addToPrincipalPolicy(new PolicyStatement({ actions, resources: [this.secrets.keyArn] }));
    return { [SECRET_KEY_ENV]: this.secrets.keyId };
  }

  /**
   * Lets `role` read the server key (and, `write`, replace it: the bootstrap) through Secrets Manager, which alone may
   * use the encryption key on its behalf.
   */
  private grantServerKey(role: IRole, write: boolean): Record<string, string> {
    const viaSecretsManager = {
      StringEquals: { 'kms:ViaService': `secretsmanager.${Stack.of(this).region}.amazonaws.com` },
    };
    const kmsActions = write ? ['kms:Decrypt', 'kms:GenerateDataKey', 'kms:Encrypt'] : ['kms:Decrypt'];
    this.serverKeyEncryption.addToResourcePolicy(
      new PolicyStatement({ principals: [role], actions: kmsActions, resources: ['*'], conditions: viaSecretsManager }),
    );
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: kmsActions,
        resources: [this.serverKeyEncryption.keyArn],
        conditions: viaSecretsManager,
      }),
    );
    const secretActions = ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'];
    if (write) secretActions.push('secretsmanager:PutSecretValue');
    role.addToPrincipalPolicy(new PolicyStatement({ actions: secretActions, resources: [this.serverKey.ref] }));
    return { [KEY_ID_ENV.server]: this.serverKey.ref };
  }

  /**
   * Lets `role` sign with each key in `roles` (a CA key: `kms:Sign` and `kms:GetPublicKey`; the server key: read its
   * secret, or `writeServerKey` replace it); answers the environment naming them.
   */
  grantSigning(role: IRole, roles: readonly SignerRole[], writeServerKey = false): Record<string, string> {
    const environment: Record<string, string> = {};
    for (const signer of roles) {
      if (signer === 'server') {
        Object.assign(environment, this.grantServerKey(role, writeServerKey));
        continue;
      }
      const key = this.keys[signer];
      key.addToResourcePolicy(
        new PolicyStatement({
          principals: [role],
          actions: ['kms:Sign', 'kms:GetPublicKey'],
          resources: ['*'],
        }),
      );
      role.addToPrincipalPolicy(
        new PolicyStatement({ actions: ['kms:Sign', 'kms:GetPublicKey'], resources: [key.keyArn] }),
      );
      environment[KEY_ID_ENV[signer]] = key.keyId;
    }
    return environment;
  }
}
