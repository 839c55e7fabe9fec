/**
 * A CDK app of your own with the controller in one of its stacks: the `ZitiController` construct, from the package
 * `npm run package` builds in the repository (see ../README.md for the steps). Everything else in the stack is yours.
 *
 *   npx cdk synth -c environment=staging -c alarmEmail=ops@example.com
 */
import { App, Stack, Tags } from 'aws-cdk-lib';
import { ZitiController } from 'ziti-serverless-controller';

const app = new App();
const environment = String(app.node.tryGetContext('environment') ?? 'dev');
const alarmEmail: unknown = app.node.tryGetContext('alarmEmail');

// Environment-agnostic: it deploys to whichever account and region the CLI's credentials point at.
const stack = new Stack(app, `Ziti-${environment}`, {
  description: `OpenZiti controller (${environment})`,
  terminationProtection: environment === 'prod',
});
Tags.of(stack).add('team', 'network');

new ZitiController(stack, 'Controller', {
  environment,
  ...(typeof alarmEmail === 'string' ? { alarmEmail } : {}),
});
