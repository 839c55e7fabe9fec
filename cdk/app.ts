import { App } from 'aws-cdk-lib';
import { resolveControllerSettings } from './controller-settings.ts';
import { ControllerStack } from './controller-stack.ts';

const app = new App();

// Environment-agnostic: deploy to whichever account and region the CLI's credentials point at.
new ControllerStack(app, 'ZitiController', {
  description: 'Serverless OpenZiti Edge API controller',
  ...resolveControllerSettings((key) => app.node.tryGetContext(key)),
});
