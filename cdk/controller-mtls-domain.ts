import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import {
  BasePathMapping,
  type CfnDomainName,
  DomainName,
  EndpointType,
  type IRestApi,
  SecurityPolicy,
} from 'aws-cdk-lib/aws-apigateway';
import { Certificate, CertificateValidation, type ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import { ReadWriteType, Trail } from 'aws-cdk-lib/aws-cloudtrail';
import { type IRole, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { ARecord, type IHostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { ApiGatewayDomain } from 'aws-cdk-lib/aws-route53-targets';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { Construct, type IDependable } from 'constructs';
import { domainTargetOutputs } from './controller-domain.ts';

/** The truststore object's key in its bucket. */
export const TRUSTSTORE_KEY = 'truststore.pem';

/** The mTLS custom domain: its name, what it serves and how API Gateway knows the name is ours. */
export interface MtlsDomainSettings {
  readonly name: string;
  /** The controller's server certificate in ACM (imported by the bootstrap), which the plain domain serves too. */
  readonly certificate: ICertificate;
  /**
   * A public ACM certificate for the name, which API Gateway asks for to verify ownership of an mTLS domain serving an
   * imported certificate (it is never presented). Unset: requested here, validated through `hostedZone`.
   */
  readonly ownershipCertificateArn?: string;
  /** The Route 53 zone of the name: its alias record, and the ownership certificate's DNS validation. */
  readonly hostedZone?: IHostedZone;
}

export interface ControllerMtlsDomainProps {
  readonly restApi: IRestApi;
  /** The custom domain that asks for client certificates; none: the truststore is kept, no domain made. */
  readonly domain?: MtlsDomainSettings;
  /** Publish the truststore: the bootstrap (the first one, before the domain exists) and the pki function. */
  readonly bootstrap: { readonly function: IFunction; readonly run: IDependable };
  readonly pkiFunction?: IFunction;
  /**
   * Record every write of the truststore in a CloudTrail trail of its own (S3 data events, write only, to a bucket of
   * its own). On by default; turn it off only where a trail of the account or organization already records this
   * bucket's data events.
   */
  readonly trail?: boolean;
}

/** How long the trail's records of truststore writes are kept. */
export const TRUSTSTORE_TRAIL_RETENTION = Duration.days(365);

/**
 * Mutual TLS for certificate logins and enrollment. API Gateway's mTLS makes a client certificate mandatory for a
 * whole custom domain, while the controller's API takes one only on some routes (cert login, ottca and CA
 * enrollment, router extension, what an SDK does after a cert login). So the stack keeps the plain endpoint for
 * everything and adds a second domain, mapped to the same API, that requires a certificate the truststore vouches
 * for: the network's root and signing CA and every verified third-party CA. The truststore is an object in a
 * versioned bucket: the bootstrap publishes it before the domain is made, and the pki function publishes it again
 * (and points the domain at the new version) whenever a CA is verified or deleted. The domain serves the controller's
 * server certificate, as the plain domain does; since ACM holds it as an imported certificate, API Gateway also asks
 * for a public ACM certificate of the name to prove ownership.
 */
export class ControllerMtlsDomain extends Construct {
  readonly bucket: Bucket;
  /** The trail of the truststore's writes, unless `trail: false`. */
  readonly trail?: Trail;
  readonly domainName?: DomainName;
  /** The certificate that proves ownership of the name to API Gateway (imported by ARN, or requested here). */
  readonly ownershipCertificate?: ICertificate;

  constructor(scope: Construct, id: string, props: ControllerMtlsDomainProps) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Truststore', {
      versioned: true,
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      // The truststore is rebuilt from the table by the next publish, but a deleted bucket breaks a live domain.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    if (props.trail !== false) this.trail = this.trailOfWrites();
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'One object of public CA certificates, written only by the bootstrap and the pki function. Who wrote it is ' +
        (this.trail
          ? "recorded by the stack's own CloudTrail trail of the bucket's object writes (S3 data events); "
          : 'recorded by a trail of the account or organization, as the operator states with `truststoreTrail: false`; ') +
        'server access logs would add a bucket to audit reads of nothing secret.',
    });

    const domainName = props.domain?.name;
    const environment: Record<string, string> = {
      TRUSTSTORE_BUCKET: this.bucket.bucketName,
      TRUSTSTORE_KEY,
    };
    this.grantPublish(props.bootstrap.function, environment);

    if (props.domain && domainName) {
      this.ownershipCertificate = ownershipCertificateOf(this, props.domain);
      this.domainName = new DomainName(this, 'Domain', {
        domainName,
        certificate: props.domain.certificate,
        endpointType: EndpointType.REGIONAL,
        securityPolicy: SecurityPolicy.TLS_1_2,
        mtls: { bucket: this.bucket, key: TRUSTSTORE_KEY },
      });
      // The L2 domain has no property for it (aws-cdk-lib 2.276).
      (this.domainName.node.defaultChild as CfnDomainName).ownershipVerificationCertificateArn =
        this.ownershipCertificate.certificateArn;
      // API Gateway reads the truststore when the domain is made: the bootstrap must have published it.
      this.domainName.node.addDependency(props.bootstrap.run);
      new BasePathMapping(this, 'Mapping', {
        domainName: this.domainName,
        restApi: props.restApi,
        stage: props.restApi.deploymentStage,
      });
      if (props.domain.hostedZone) {
        new ARecord(this, 'Alias', {
          zone: props.domain.hostedZone,
          recordName: domainName,
          target: RecordTarget.fromAlias(new ApiGatewayDomain(this.domainName)),
        });
      }
      domainTargetOutputs(this, 'MtlsDomain', domainName, this.domainName);
    }
    if (props.pkiFunction) {
      this.grantPublish(props.pkiFunction, { ...environment, ...(domainName ? { MTLS_DOMAIN_NAME: domainName } : {}) });
      if (domainName) {
        // Telling the domain to read the new truststore version; API Gateway reads the object as the caller.
        props.pkiFunction.role?.addToPrincipalPolicy(
          new PolicyStatement({
            actions: ['apigateway:PATCH'],
            resources: [
              `arn:${Stack.of(this).partition}:apigateway:${Stack.of(this).region}::/domainnames/${domainName}`,
            ],
          }),
        );
      }
    }
  }

  /**
   * A trail of the truststore's object writes (CloudTrail data events, which no trail records unless asked), without
   * management events: the account's own trail has those. Its log files go to a bucket of their own, retained with
   * the stack's other audit records and expired after {@link TRUSTSTORE_TRAIL_RETENTION}.
   */
  private trailOfWrites(): Trail {
    const logs = new Bucket(this, 'TrailLogs', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      lifecycleRules: [{ expiration: TRUSTSTORE_TRAIL_RETENTION }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(logs).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        "CloudTrail's log files of the truststore's writes: only CloudTrail writes here (bucket policy), and access " +
        'logs of an audit bucket would need a third bucket, whose own access would again go unlogged.',
    });
    const trail = new Trail(this, 'TruststoreWrites', {
      bucket: logs,
      managementEvents: ReadWriteType.NONE,
      includeGlobalServiceEvents: false,
      isMultiRegionTrail: false,
      enableFileValidation: true,
    });
    trail.addS3EventSelector([{ bucket: this.bucket, objectPrefix: TRUSTSTORE_KEY }], {
      readWriteType: ReadWriteType.WRITE_ONLY,
      includeManagementEvents: false,
    });
    return trail;
  }

  /** Lets a function write (and read back, as API Gateway does in its name) the truststore object. */
  private grantPublish(fn: IFunction, environment: Record<string, string>): void {
    const role = fn.role as IRole;
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:PutObject', 's3:GetObject', 's3:GetObjectVersion'],
        resources: [this.bucket.arnForObjects(TRUSTSTORE_KEY)],
      }),
    );
    const target = fn as IFunction & { addEnvironment?: (key: string, value: string) => unknown };
    for (const [name, value] of Object.entries(environment)) target.addEnvironment?.(name, value);
  }
}

/** The ownership verification certificate: the one named, else a public one requested and validated through DNS. */
function ownershipCertificateOf(scope: Construct, domain: MtlsDomainSettings): ICertificate {
  if (domain.ownershipCertificateArn) {
    return Certificate.fromCertificateArn(scope, 'OwnershipCertificate', domain.ownershipCertificateArn);
  }
  if (!domain.hostedZone) {
    throw new Error(
      `the mTLS domain ${domain.name} needs an ownership certificate ARN or a hosted zone to request one`,
    );
  }
  return new Certificate(scope, 'OwnershipCertificate', {
    domainName: domain.name,
    validation: CertificateValidation.fromDns(domain.hostedZone),
  });
}
