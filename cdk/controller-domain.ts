import { CfnOutput } from 'aws-cdk-lib';
import { BasePathMapping, DomainName, EndpointType, type IRestApi, SecurityPolicy } from 'aws-cdk-lib/aws-apigateway';
import type { ICertificate } from 'aws-cdk-lib/aws-certificatemanager';
import { ARecord, type IHostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { ApiGatewayDomain } from 'aws-cdk-lib/aws-route53-targets';
import { Construct } from 'constructs';

export interface ControllerDomainProps {
  readonly restApi: IRestApi;
  /** The custom domain name, such as `ziti.example.com`. */
  readonly domainName: string;
  /** The controller's server certificate in ACM, as the bootstrap answers it. */
  readonly certificate: ICertificate;
  /** The Route 53 zone to make the domain's alias record in; without one, DNS is the operator's (the outputs). */
  readonly hostedZone?: IHostedZone;
  /** The prefix of its target outputs (`Domain`: `DomainTarget`, `DomainTargetHostedZoneId`). */
  readonly outputPrefix?: string;
}

/**
 * The plain API's custom domain: a regional TLS 1.2 domain serving the controller's server certificate, the REST
 * API's stage mapped at its root. SDKs call root paths (`/edge/client/v1/...`) at the enrollment JWT's issuer, and
 * trust the TLS handshake only when the JWT verifies with the public key of the certificate it presents, so the
 * domain must serve that certificate (issued by the network CA) and no stage name may stand in the path.
 */
export class ControllerDomain extends Construct {
  readonly domainName: DomainName;

  constructor(scope: Construct, id: string, props: ControllerDomainProps) {
    super(scope, id);
    this.domainName = new DomainName(this, 'Domain', {
      domainName: props.domainName,
      certificate: props.certificate,
      endpointType: EndpointType.REGIONAL,
      securityPolicy: SecurityPolicy.TLS_1_2,
    });
    new BasePathMapping(this, 'Mapping', {
      domainName: this.domainName,
      restApi: props.restApi,
      stage: props.restApi.deploymentStage,
    });
    if (props.hostedZone) {
      new ARecord(this, 'Alias', {
        zone: props.hostedZone,
        recordName: props.domainName,
        target: RecordTarget.fromAlias(new ApiGatewayDomain(this.domainName)),
      });
    }
    domainTargetOutputs(this, props.outputPrefix ?? 'Domain', props.domainName, this.domainName);
  }
}

/**
 * The regional target a domain's DNS name must point at (CNAME, or an alias in that Route 53 zone), as the outputs
 * `<prefix>Target` and `<prefix>TargetHostedZoneId`, named so whatever the construct's path.
 */
export function domainTargetOutputs(scope: Construct, prefix: string, name: string, domain: DomainName): void {
  const outputs = {
    [`${prefix}Target`]: {
      description: `Regional target of ${name}: point its DNS name here (CNAME, or an alias record)`,
      value: domain.domainNameAliasDomainName,
    },
    [`${prefix}TargetHostedZoneId`]: {
      description: `The Route 53 hosted zone of that target, for an alias record of ${name}`,
      value: domain.domainNameAliasHostedZoneId,
    },
  };
  for (const [id, props] of Object.entries(outputs)) new CfnOutput(scope, id, props).overrideLogicalId(id);
}
