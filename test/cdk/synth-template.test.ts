import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '#shared/routes/route-table.ts';
import { functionSources } from '../../cdk/operation-groups.ts';
import type { StackForCloudFormation } from '../../scripts/synth-template.ts';

/**
 * `npm run synth:template`, as a CloudFormation-only operator runs it: the real command (the CDK CLI, the app, the
 * bundling), then what it wrote: the template, every asset the template expects in the operator's bucket, and an
 * upload script that does what the list says (run here against a stand-in `aws` that records each copy).
 */

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BUCKET = 'ziti-assets-test';
const work = mkdtempSync(join(tmpdir(), 'synth-template-'));
const out = join(work, 'cloudformation');
let printed = '';
let stacks: StackForCloudFormation[] = [];

interface Template {
  Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
  Parameters?: Record<string, unknown>;
  Rules?: Record<string, unknown>;
}

beforeAll(() => {
  printed = execFileSync(
    'npm',
    [
      'run',
      '--silent',
      'synth:template',
      '--',
      '-c',
      `assetBucket=${BUCKET}`,
      '-c',
      'environment=staging',
      // The assets and the template's shape are what this checks; the domains are the other tests'.
      '-c',
      'managementOnly=true',
      '--output',
      out,
    ],
    { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  stacks = JSON.parse(readFileSync(join(out, 'upload.json'), 'utf8')) as StackForCloudFormation[];
}, 600_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('npm run synth:template', () => {
  it('writes the template, with its assets in the named bucket and nothing of cdk bootstrap', () => {
    expect(stacks.map((stack) => stack.stackName)).toEqual(['ZitiController-staging']);
    const [stack] = stacks;
    const text = readFileSync(join(out, stack!.template), 'utf8');
    const template = JSON.parse(text) as Template;
    // No BootstrapVersion parameter or rule (they read cdk bootstrap's SSM parameter), no bootstrap bucket or role.
    expect(template.Parameters ?? {}).toEqual({});
    expect(template.Rules ?? {}).toEqual({});
    expect(text.includes('cdk-hnb659fds')).toBe(false);
    expect(printed).toContain(`template ${join(out, stack!.template)}`);
    // CloudFormation takes a template this size only from S3 (51,200 bytes inline, 1 MB from S3).
    expect(text.length).toBeGreaterThan(51_200);
    expect(text.length).toBeLessThan(1_000_000);
    expect(stack!.templateObject).toMatch(new RegExp(`^s3://${BUCKET}/[0-9a-f]{64}\\.json$`));
  });

  it('lists every asset the template names, each function among them, with where it goes', () => {
    const [stack] = stacks;
    const template = JSON.parse(readFileSync(join(out, stack!.template), 'utf8')) as Template;
    const functions = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::Lambda::Function');
    // Every operation group's, the bootstrap's, the integrity scan's, the sweep's and the custom resource provider's.
    expect(functions).toHaveLength(functionSources(ROUTES).length + 1);
    const uploads = new Map(stack!.uploads.map((upload) => [`${upload.bucket}/${upload.key}`, upload]));
    for (const [id, fn] of functions) {
      const code = fn.Properties.Code as { S3Bucket: string; S3Key: string };
      expect(code.S3Bucket, id).toBe(BUCKET);
      const upload = uploads.get(`${BUCKET}/${code.S3Key}`);
      expect(upload?.packaging, id).toBe('zip');
      const [file] = String(fn.Properties.Handler).split('.');
      expect(readdirSync(join(out, upload!.source)), id).toEqual(
        expect.arrayContaining([expect.stringMatching(new RegExp(`^${file}\\.m?js$`))]),
      );
      expect(printed).toContain(`s3://${BUCKET}/${code.S3Key}`);
    }
    // Nothing listed that the template does not use, but the template itself.
    const used = new Set(functions.map(([, fn]) => (fn.Properties.Code as { S3Key: string }).S3Key));
    expect(stack!.uploads.filter((upload) => !used.has(upload.key)).map((upload) => upload.source)).toEqual([
      stack!.template,
    ]);
  });

  it("refuses to run without the operator's bucket, saying how to name it", () => {
    let failure: { status?: number; stderr?: string } = {};
    try {
      execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'synth-template.ts'), '-c', 'environment=dev'], {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      failure = error as typeof failure;
    }
    expect(failure.status).toBe(1);
    expect(failure.stderr).toContain('npm run synth:template -- -c assetBucket=<bucket>');
  });

  // Issue 22's "done when", read off what the real `cdk synth` of the app made.
  it('holds alarms, a dashboard, a topic, versioned functions behind live aliases, tags, the environment in names', () => {
    const [stack] = stacks;
    const template = JSON.parse(readFileSync(join(out, stack!.template), 'utf8')) as Template;
    const resources = Object.entries(template.Resources);
    const ofType = (type: string) => resources.filter(([, r]) => r.Type === type);
    expect(ofType('AWS::CloudWatch::Alarm').length).toBeGreaterThan(30);
    expect(ofType('AWS::CloudWatch::Dashboard').map(([, r]) => r.Properties.DashboardName)).toEqual([
      'ZitiController-staging',
    ]);
    expect(ofType('AWS::SNS::Topic')).toHaveLength(1);
    const controllerFunctions = ofType('AWS::Lambda::Function').filter(
      ([, r]) => r.Properties.Handler === 'index.handler',
    );
    expect(controllerFunctions).toHaveLength(functionSources(ROUTES).length);
    for (const [id] of controllerFunctions) {
      const alias = ofType('AWS::Lambda::Alias').find(
        ([, a]) => JSON.stringify(a.Properties.FunctionName) === `{"Ref":"${id}"}`,
      );
      expect(alias?.[1].Properties.Name, id).toBe('live');
      const [versionId] = (alias![1].Properties.FunctionVersion as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'];
      expect(template.Resources[versionId]?.Type, id).toBe('AWS::Lambda::Version');
    }
    for (const [id, resource] of resources.filter(([, r]) => Array.isArray(r.Properties?.Tags))) {
      expect(resource.Properties.Tags, id).toEqual(
        expect.arrayContaining([
          { Key: 'ziti:environment', Value: 'staging' },
          expect.objectContaining({ Key: 'ziti:version' }),
        ]),
      );
    }
    expect(ofType('AWS::ApiGateway::Stage')[0]![1].Properties.StageName).toBe('staging');
    for (const [id, alarm] of ofType('AWS::CloudWatch::Alarm')) {
      expect(alarm.Properties.AlarmName, id).toMatch(/^ZitiController-staging-/);
    }
  });

  it('writes an upload script that zips each function directory and copies everything to its key', () => {
    const [stack] = stacks;
    const bin = join(work, 'bin');
    const bucket = join(work, 'bucket');
    mkdirSync(bin);
    mkdirSync(bucket);
    // A stand-in for `aws s3 cp <file> s3://<bucket>/<key>` that copies into a directory.
    writeFileSync(
      join(bin, 'aws'),
      `#!/bin/sh\nset -eu\n[ "$1 $2" = "s3 cp" ]\nkey=\${4#s3://}\nmkdir -p "${bucket}/$(dirname "$key")"\ncp "$3" "${bucket}/$key"\n`,
    );
    chmodSync(join(bin, 'aws'), 0o755);
    execFileSync(join(out, 'upload-assets.sh'), {
      cwd: work,
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      stdio: 'pipe',
    });
    expect(readdirSync(join(bucket, BUCKET)).sort()).toEqual(stack!.uploads.map((upload) => upload.key).sort());
    for (const upload of stack!.uploads.filter((u) => u.packaging === 'zip')) {
      const listing = execFileSync('unzip', ['-Z1', join(bucket, BUCKET, upload.key)], { encoding: 'utf8' });
      // The directory's contents at the zip's root, where Lambda looks for the handler's file, with its subdirectories
      // (the bundles' lazily imported chunks); zip names a directory entry with a trailing slash.
      const zipped = listing
        .trim()
        .split('\n')
        .map((entry) => entry.replace(/\/$/, ''));
      const directory = readdirSync(join(out, upload.source), { recursive: true }).map(String);
      expect(zipped.sort(), upload.name).toEqual(directory.sort());
    }
  });
});
