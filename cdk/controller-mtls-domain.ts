import { CfnOutput, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { BasePathMapping, DomainName, EndpointType, type IRestApi, SecurityPolicy } from 'aws-cdk-lib/aws-apigateway';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { type IRole, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { Construct, type IDependable } from 'constructs';

/** The truststore object's key in its bucket. */
export const TRUSTSTORE_KEY = 'truststore.pem';

export interface ControllerMtlsDomainProps {
  readonly restApi: IRestApi;
  /** The custom domain name that asks for client certificates, and its ACM certificate (same region). */
  readonly domain?: { readonly name: string; readonly certificateArn: string };
  /** Publish the truststore: the bootstrap (the first one, before the domain exists) and the pki function. */
  readonly bootstrap: { readonly function: IFunction; readonly run: IDependable };
  readonly pkiFunction?: IFunction;
}

/**
 * Mutual TLS for certificate logins and enrollment. API Gateway's mTLS makes a client certificate mandatory for a
 * whole custom domain, while the controller's API takes one only on some routes (cert login, ottca and CA
 * enrollment, router extension, what an SDK does after a cert login). So the stack keeps the plain endpoint for
 * everything and adds a second domain, mapped to the same API, that requires a certificate the truststore vouches
 * for: the network's root and signing CA and every verified third-party CA. The truststore is an object in a
 * versioned bucket: the bootstrap publishes it before the domain is made, and the pki function publishes it again
 * (and points the domain at the new version) whenever a CA is verified or deleted.
 */
export class ControllerMtlsDomain extends Construct {
  readonly bucket: Bucket;
  readonly domainName?: DomainName;

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
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'One object of public CA certificates, written only by the bootstrap and the pki function (CloudTrail records ' +
        'those calls); server access logs would add a second bucket to audit nothing secret.',
    });

    const domainName = props.domain?.name;
    const environment: Record<string, string> = {
      TRUSTSTORE_BUCKET: this.bucket.bucketName,
      TRUSTSTORE_KEY,
    };
    this.grantPublish(props.bootstrap.function, environment);

    if (props.domain && domainName) {
      this.domainName = new DomainName(this, 'Domain', {
        domainName,
        certificate: Certificate.fromCertificateArn(this, 'Certificate', props.domain.certificateArn),
        endpointType: EndpointType.REGIONAL,
        securityPolicy: SecurityPolicy.TLS_1_2,
        mtls: { bucket: this.bucket, key: TRUSTSTORE_KEY },
      });
      // API Gateway reads the truststore when the domain is made: the bootstrap must have published it.
      this.domainName.node.addDependency(props.bootstrap.run);
      new BasePathMapping(this, 'Mapping', { domainName: this.domainName, restApi: props.restApi });
      new CfnOutput(this, 'MtlsDomainTarget', {
        description: 'Regional target of the mTLS domain: point its DNS name here (CNAME or alias)',
        value: this.domainName.domainNameAliasDomainName,
      });
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
