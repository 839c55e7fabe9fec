import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '#shared/routes/route-table.ts';
import { functionSources, operationGroupsOf } from '../../cdk/operation-groups.ts';

/**
 * The construct package as another CDK app gets it: built (`scripts/build-package.ts`), packed with `npm pack`,
 * unpacked into the `node_modules` of a tiny app in a temporary directory (beside the CDK libraries, which the app
 * brings), then synthesised and type-checked there. Nothing of this repository's sources is reachable from it.
 */

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGE = 'ziti-serverless-controller';
const work = mkdtempSync(join(tmpdir(), 'construct-package-'));
const app = join(work, 'app');
const installed = join(app, 'node_modules', PACKAGE);
const EXAMPLE_SOURCE = join(REPO_ROOT, 'examples', 'cdk-app');
const example = join(work, 'example');

function run(command: string, args: readonly string[], cwd: string, env = process.env): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env });
}

/** Every file under a directory, relative to it. */
function filesUnder(directory: string, prefix = ''): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesUnder(join(directory, entry.name), `${prefix}${entry.name}/`)
      : [`${prefix}${entry.name}`],
  );
}

const CONSUMER_JS = `import { App, Stack } from 'aws-cdk-lib';
import { ZitiController } from '${PACKAGE}';
const app = new App({ outdir: process.argv[2] });
const stack = new Stack(app, 'Consumer');
new ZitiController(stack, 'Ziti', { environment: 'dev', alarmEmail: 'ops@example.com' });
app.synth();
`;

const CONSUMER_TS = `import { App, Stack } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { ALARM_THRESHOLDS, ZitiController, type ZitiControllerProps } from '${PACKAGE}';

const props: ZitiControllerProps = {
  environment: 'dev',
  domainName: 'ziti.example.com',
  tableName: 'ziti-restored',
  firewall: true,
  logRetentionDays: RetentionDays.ONE_WEEK,
  memorySize: 2048,
  alarmEmail: 'ops@example.com',
};
const app = new App();
const controller = new ZitiController(new Stack(app, 'Typed'), 'Ziti', props);
export const stage: string = controller.environment;
export const threshold: number = ALARM_THRESHOLDS.api5xxPercent;
// @ts-expect-error memorySize is a number of megabytes
new ZitiController(new Stack(app, 'Wrong'), 'Ziti', { memorySize: '2048' });
`;

beforeAll(() => {
  const built = join(work, 'package');
  run(process.execPath, [join(REPO_ROOT, 'scripts', 'build-package.ts'), built], REPO_ROOT);
  const [packed] = JSON.parse(run('npm', ['pack', built, '--pack-destination', work, '--json'], work)) as {
    filename: string;
  }[];
  mkdirSync(installed, { recursive: true });
  run('tar', ['-xzf', join(work, packed!.filename), '-C', installed, '--strip-components=1'], work);
  // What the app brings itself: the CDK libraries (peers of the package) and Node's types.
  for (const library of ['aws-cdk-lib', 'constructs', '@types/node']) {
    mkdirSync(join(app, 'node_modules', library, '..'), { recursive: true });
    symlinkSync(join(REPO_ROOT, 'node_modules', library), join(app, 'node_modules', library));
  }
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  writeFileSync(join(app, 'app.mjs'), CONSUMER_JS);
  writeFileSync(join(app, 'app.ts'), CONSUMER_TS);
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'es2022',
        module: 'nodenext',
        moduleResolution: 'nodenext',
        strict: true,
        noEmit: true,
        // The package's declarations are checked too, not only what the app uses of them.
        skipLibCheck: false,
        types: ['node'],
      },
      files: ['app.ts'],
    }),
  );
  // The example as a reader has it after `npm install`: its files, and the package and the CDK libraries installed.
  cpSync(EXAMPLE_SOURCE, example, {
    recursive: true,
    filter: (source) => !/[/\\](node_modules|cdk\.out)$/.test(source),
  });
  symlinkSync(join(app, 'node_modules'), join(example, 'node_modules'));
}, 600_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the construct package', () => {
  it('holds JavaScript, declarations and the function bundles, and no TypeScript source', () => {
    const files = filesUnder(installed);
    expect(files).toEqual(expect.arrayContaining(['package.json', 'index.js', 'types/cdk/index.d.ts']));
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    for (const fn of ['info', 'identities', 'pki', 'bootstrap', 'integrity', 'session-sweep']) {
      expect(files, fn).toContain(`functions/${fn}/index.mjs`);
    }
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({
      name: PACKAGE,
      type: 'module',
      exports: { '.': { types: './types/cdk/index.d.ts', default: './index.js' } },
      peerDependencies: { 'aws-cdk-lib': expect.any(String), constructs: expect.any(String) },
    });
    expect(manifest.dependencies).toBeUndefined();
  });

  it('synthesises from another CDK app, the functions from the bundles it ships', { timeout: 300_000 }, () => {
    const outdir = join(work, 'cdk.out');
    run(process.execPath, ['app.mjs', outdir], app);

    const template = JSON.parse(readFileSync(join(outdir, 'Consumer.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
    };
    const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
    const controllerFunctions = functions.filter((fn) => fn.Properties.Handler === 'index.handler');
    // Every operation group's, the bootstrap's, the integrity scan's and the ended sessions' sweep's (the provider
    // framework's own is CDK's).
    expect(controllerFunctions).toHaveLength(functionSources(ROUTES).length);
    const manifest = JSON.parse(readFileSync(join(outdir, 'Consumer.assets.json'), 'utf8')) as {
      files: Record<string, { source: { path: string; packaging: string } }>;
    };
    // Each function's code is one of the bundles the package ships, byte for byte: nothing was bundled again.
    const shipped = new Set(
      readdirSync(join(installed, 'functions')).map((fn) =>
        readFileSync(join(installed, 'functions', fn, 'index.mjs'), 'utf8'),
      ),
    );
    const deployed = new Set<string>();
    for (const fn of controllerFunctions) {
      const key = String((fn.Properties.Code as { S3Key: string }).S3Key).replace(/\.zip$/, '');
      const asset = manifest.files[key]!;
      expect(asset.source.packaging).toBe('zip');
      const code = readFileSync(join(outdir, asset.source.path, 'index.mjs'), 'utf8');
      expect(shipped.has(code)).toBe(true);
      deployed.add(code);
    }
    expect(deployed.size).toBe(functionSources(ROUTES).length);
    // Each controller function published as a version behind its `live` alias, which is what the API invokes.
    const logicalIdOf = new Map(Object.entries(template.Resources).map(([id, resource]) => [resource, id]));
    const aliases = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Alias');
    for (const fn of controllerFunctions) {
      const id = logicalIdOf.get(fn)!;
      const alias = aliases.find((a) => JSON.stringify(a.Properties.FunctionName) === JSON.stringify({ Ref: id }));
      expect(alias?.Properties, id).toMatchObject({
        Name: 'live',
        FunctionVersion: { 'Fn::GetAtt': [expect.stringMatching(/CurrentVersion/), 'Version'] },
      });
    }
    const apis = Object.values(template.Resources).filter((r) => r.Type === 'AWS::ApiGateway::RestApi');
    expect(apis).toHaveLength(1);
    const body = JSON.stringify(apis[0]!.Properties.Body);
    // (Booleans, not the body itself: a failure would print a quarter of a megabyte.)
    expect(body.includes('"/edge/management/v1/identities"')).toBe(true);
    // Every integration invokes an alias (never a function's unqualified ARN): one per operation group.
    const invoked = new Set([...body.matchAll(/functions\/\$\{(\w+)\}\/invocations/g)].map((match) => match[1]));
    expect(invoked.size).toBe(operationGroupsOf(ROUTES).length);
    for (const id of invoked) expect(template.Resources[id!]?.Type, id).toBe('AWS::Lambda::Alias');
    expect(Object.values(template.Resources).filter((r) => r.Type === 'AWS::DynamoDB::Table')).toHaveLength(1);
    // Stamped when the package was built: the version its functions report, on every resource.
    const table = Object.values(template.Resources).find((r) => r.Type === 'AWS::DynamoDB::Table')!;
    expect(table.Properties.Tags).toEqual(
      expect.arrayContaining([
        { Key: 'ziti:environment', Value: 'dev' },
        { Key: 'ziti:version', Value: expect.stringMatching(/^v\d+\.\d+\.\d+/) },
      ]),
    );
  });

  it('types its props for a TypeScript app', { timeout: 300_000 }, () => {
    expect(() =>
      run(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], app),
    ).not.toThrow();
  });
});

describe('the example CDK app (examples/cdk-app)', () => {
  const manifest = JSON.parse(readFileSync(join(EXAMPLE_SOURCE, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };

  it('depends on the package by the name its build gives, and on the CDK libraries this repository uses', () => {
    const built = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { name: string };
    const root = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    expect(manifest.dependencies).toEqual({
      [built.name]: 'file:../../dist/package',
      'aws-cdk-lib': root.devDependencies['aws-cdk-lib'],
      constructs: root.devDependencies.constructs,
    });
  });

  it('synthesises with `cdk synth`, its stack holding the controller', { timeout: 300_000 }, () => {
    const outdir = join(work, 'example.out');
    // The CLI runs cdk.json's `node bin/app.ts` with the Node running the tests (it strips the types).
    const env = {
      ...process.env,
      PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
      CDK_DISABLE_VERSION_CHECK: '1',
      CDK_DISABLE_CLI_TELEMETRY: 'true',
    };
    const cdk = join(REPO_ROOT, 'node_modules', 'aws-cdk', 'bin', 'cdk');
    run(
      process.execPath,
      [
        cdk,
        'synth',
        '--quiet',
        '--no-notices',
        '-c',
        'environment=staging',
        '-c',
        'alarmEmail=ops@example.com',
        '-o',
        outdir,
      ],
      example,
      env,
    );

    const template = JSON.parse(readFileSync(join(outdir, 'Ziti-staging.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
    };
    const resources = Object.values(template.Resources);
    expect(resources.filter((r) => r.Type === 'AWS::ApiGateway::RestApi')).toHaveLength(1);
    expect(resources.filter((r) => r.Type === 'AWS::SNS::Subscription')).toEqual([
      expect.objectContaining({ Properties: expect.objectContaining({ Endpoint: 'ops@example.com' }) }),
    ]);
    const table = resources.find((r) => r.Type === 'AWS::DynamoDB::Table')!;
    expect(table.Properties.Tags).toEqual(
      expect.arrayContaining([
        { Key: 'ziti:environment', Value: 'staging' },
        { Key: 'team', Value: 'network' },
      ]),
    );
  });

  it('type-checks with its own tsconfig.json', { timeout: 300_000 }, () => {
    expect(() =>
      run(
        process.execPath,
        [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
        example,
      ),
    ).not.toThrow();
  });
});
