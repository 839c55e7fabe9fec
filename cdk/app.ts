import { App, DefaultStackSynthesizer } from 'aws-cdk-lib';
import { isProduction, resolveControllerSettings, stackNameOf } from './controller-settings.ts';
import { ControllerStack } from './controller-stack.ts';

const app = new App();
const { stackName, terminationProtection, ...settings } = resolveControllerSettings((key) =>
  app.node.tryGetContext(key),
);

// A template for CloudFormation alone (`npm run synth:template -- -c assetBucket=<bucket>`): the assets in a bucket
// of the operator's and no check of `cdk bootstrap`'s version (docs/aws.md, "Deploying with CloudFormation alone").
const assetBucket: unknown = app.node.tryGetContext('assetBucket');
if (
  assetBucket !== undefined &&
  (typeof assetBucket !== 'string' || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(assetBucket))
) {
  throw new Error(`assetBucket must be an S3 bucket name, got ${JSON.stringify(assetBucket)}`);
}

// Environment-agnostic: deploy to whichever account and region the CLI's credentials point at.
new ControllerStack(app, stackName ?? stackNameOf(settings.environment), {
  description: `Serverless OpenZiti Edge API controller (${settings.environment})`,
  terminationProtection: terminationProtection ?? isProduction(settings.environment),
  ...(typeof assetBucket === 'string'
    ? {
        synthesizer: new DefaultStackSynthesizer({
          fileAssetsBucketName: assetBucket,
          generateBootstrapVersionRule: false,
        }),
      }
    : {}),
  ...settings,
});
