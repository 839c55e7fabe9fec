import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { alarmCount, type Door, WEB_ACL_RULES } from '../../bench/fleet-bill.ts';
import { ControllerStack, type ControllerStackProps } from '../../cdk/controller-stack.ts';
import { cdkJsonContext } from './synth-context.ts';

interface CfnResource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
}

const DOMAIN = { domainName: 'ziti.example.com' };

function synth(props: ControllerStackProps) {
  // Bundling skipped: the template does not depend on the bundle.
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  const stack = new ControllerStack(app, 'FirewallController', { adminUsername: 'admin', ...DOMAIN, ...props });
  const resources = (Template.fromStack(stack).toJSON() as { Resources: Record<string, CfnResource> }).Resources;
  const ofType = (type: string) => Object.values(resources).filter((resource) => resource.Type === type);
  return { stack, ofType };
}

const DOORS: [string, Door, ControllerStackProps][] = [
  ['the REST API with the web ACL (the default)', { frontDoor: 'rest', firewall: true }, {}],
  ['the REST API without it', { frontDoor: 'rest', firewall: false }, { firewall: false }],
  [
    'the load balancer with the web ACL (the default)',
    { frontDoor: 'alb', firewall: true },
    { frontDoor: 'load-balancer' },
  ],
  [
    'the load balancer without it',
    { frontDoor: 'alb', firewall: false },
    { frontDoor: 'load-balancer', firewall: false },
  ],
];

describe.each(DOORS)('%s', (_, door, props) => {
  const { stack, ofType } = synth(props);
  const alarmNames = ofType('AWS::CloudWatch::Alarm').map((alarm) => String(alarm.Properties.AlarmName));

  it(
    door.firewall
      ? 'has a web ACL on its front door, its log and its alarm'
      : 'has no web ACL, no WAF log and no WAF alarm',
    () => {
      const expected = door.firewall ? 1 : 0;
      expect(ofType('AWS::WAFv2::WebACL')).toHaveLength(expected);
      expect(ofType('AWS::WAFv2::WebACLAssociation')).toHaveLength(expected);
      expect(ofType('AWS::WAFv2::LoggingConfiguration')).toHaveLength(expected);
      expect(alarmNames.filter((name) => name.endsWith('-waf-blocked'))).toHaveLength(expected);
      expect(stack.controller.firewall === undefined).toBe(!door.firewall);
      const [association] = ofType('AWS::WAFv2::WebACLAssociation');
      if (association) {
        const guarded = door.frontDoor === 'alb' ? stack.controller.loadBalancer : stack.controller.api;
        expect(guarded, 'its front door').toBeDefined();
        expect(JSON.stringify(association.Properties.ResourceArn)).toMatch(
          door.frontDoor === 'alb' ? /LoadBalancer/ : /Stage/,
        );
      }
    },
  );

  it("has the alarms and web ACL rules the bill's fixed items count", () => {
    expect(alarmNames).toHaveLength(alarmCount(door));
    for (const webAcl of ofType('AWS::WAFv2::WebACL')) expect(webAcl.Properties.Rules).toHaveLength(WEB_ACL_RULES);
  });
});
