import { RemovalPolicy } from 'aws-cdk-lib';
import { AccountRootPrincipal, type IRole, PolicyDocument, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import type { SignerRole } from '#shared/pki/signer.ts';
import type { OperationGroup } from '#shared/routes/route.ts';

/** The environment variable that hands each key's id to the functions that sign with it (`shared/config.ts`). */
export const KEY_ID_ENV: Readonly<Record<SignerRole, string>> = {
  rootCa: 'ROOT_CA_KEY_ID',
  signingCa: 'SIGNING_CA_KEY_ID',
  enrollment: 'ENROLLMENT_KEY_ID',
};

/**
 * Which operation groups sign with which key. Only these get `kms:Sign` and `kms:GetPublicKey` on it, in the key
 * policy and in their role: identities and routers sign the enrollment JWTs of what they create; pki signs the
 * challenge, the network JWT, and (with the signing CA) the certificates it issues. The bootstrap function signs the
 * CA certificates with the root and signing CA keys.
 */
export const SIGNING_GROUPS: Readonly<Partial<Record<OperationGroup, readonly SignerRole[]>>> = {
  identities: ['enrollment'],
  routers: ['enrollment'],
  pki: ['signingCa', 'enrollment'],
};
export const BOOTSTRAP_KEYS: readonly SignerRole[] = ['rootCa', 'signingCa'];

/** The operation groups that seal or open stored secrets (TOTP seeds): only these get the secrets key. */
export const SECRET_GROUPS: readonly OperationGroup[] = ['authentication'];
/** The environment variable naming the secrets key to them (`shared/config.ts`). */
export const SECRET_KEY_ENV = 'SECRET_KEY_ID';

const DESCRIPTIONS: Readonly<Record<SignerRole, string>> = {
  rootCa: 'Ziti controller: network root CA key (signs the signing CA certificate)',
  signingCa: 'Ziti controller: network signing CA key (issues identity, router and ephemeral certificates)',
  enrollment: 'Ziti controller: enrollment JWT key (signs enrollment JWTs and challenge answers)',
};

/** What the account's administrators may do with a key, which does not include using it. */
const ADMINISTRATION = [
  'kms:Create*',
  'kms:Describe*',
  'kms:Enable*',
  'kms:List*',
  'kms:Put*',
  'kms:Update*',
  'kms:Revoke*',
  'kms:Disable*',
  'kms:Get*',
  'kms:Delete*',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
];

/**
 * The network's three PKI keys: asymmetric `ECC_NIST_P256` `SIGN_VERIFY` KMS keys whose private halves never leave
 * KMS. The key policy lets the account administer a key but not sign with it (so no IAM policy elsewhere can grant
 * `kms:Sign`); only the roles named with {@link grantSigning} may sign and read the public key.
 *
 * Rotation: KMS does not rotate asymmetric keys. Rotating one means a new key and a new CA certificate (root: every
 * issued certificate chains to it; enrollment: outstanding JWTs stop verifying), so keys are retained when the stack
 * is deleted and are replaced only deliberately.
 */
export class ControllerKeys extends Construct {
  readonly keys: Readonly<Record<SignerRole, Key>>;
  /**
   * The symmetric key of the envelope encryption of stored secrets: each TOTP seed is sealed with its own data key
   * from `GenerateDataKey`, opened with `Decrypt`. KMS rotates it yearly (old versions keep decrypting).
   */
  readonly secrets: Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    const key = (role: SignerRole, keyId: string) =>
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
      enrollment: key('enrollment', 'EnrollmentKey'),
    };
    this.secrets = new Key(this, 'SecretsKey', {
      description: 'Ziti controller: envelope key of stored secrets (TOTP seeds and recovery codes)',
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

  /** Lets `role` sign with and read the public half of each key in `roles`; answers the environment naming them. */
  grantSigning(role: IRole, roles: readonly SignerRole[]): Record<string, string> {
    const environment: Record<string, string> = {};
    for (const signer of roles) {
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
