/**
 * The stack for CloudFormation alone, without `cdk bootstrap` or `cdk deploy`: synthesises the app with its file
 * assets in a bucket of the operator's (`-c assetBucket=<bucket>`, cdk/app.ts), then writes beside the template what
 * to upload where (`upload.json`, and `upload-assets.sh`, which zips and copies with the `zip` and `aws` commands).
 *
 *   npm run synth:template -- -c assetBucket=<bucket> [-c environment=prod …] [--output <dir>, default dist/cloudformation]
 *
 * Every other argument goes to `cdk synth`. docs/aws.md, "Deploying with CloudFormation alone".
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const DEFAULT_OUTPUT = join(REPO_ROOT, 'dist', 'cloudformation');

/** One file to put in S3 before the stack is created or updated. */
export interface Upload {
  /** What it is (CDK's display name: `…/InfoFunction/Code`, `ZitiController-prod Template`). */
  readonly name: string;
  /** Relative to the output directory: a directory to zip (its contents, not itself) or a file to copy as it is. */
  readonly source: string;
  readonly packaging: 'zip' | 'file';
  readonly bucket: string;
  readonly key: string;
}

export interface StackForCloudFormation {
  readonly stackName: string;
  /** The template, relative to the output directory. */
  readonly template: string;
  /**
   * Where the template itself is uploaded (`s3://bucket/key`): past 51,200 bytes CloudFormation takes a template only
   * from S3, as `https://<bucket>.s3.<region>.amazonaws.com/<key>`.
   */
  readonly templateObject: string;
  readonly uploads: readonly Upload[];
}

interface AssemblyManifest {
  readonly artifacts: Record<
    string,
    {
      readonly type: string;
      readonly properties?: { readonly file?: string; readonly templateFile?: string };
      readonly dependencies?: readonly string[];
    }
  >;
}

interface AssetManifest {
  readonly files?: Record<
    string,
    {
      readonly displayName?: string;
      readonly source: { readonly path: string; readonly packaging?: 'zip' | 'file' };
      readonly destinations: Record<string, { readonly bucketName: string; readonly objectKey: string }>;
    }
  >;
  readonly dockerImages?: Record<string, unknown>;
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

/** The stacks of a synthesised cloud assembly, each with the files its template expects in S3. */
export function stacksOf(outDirectory: string): StackForCloudFormation[] {
  const assembly = readJson<AssemblyManifest>(join(outDirectory, 'manifest.json'));
  return Object.entries(assembly.artifacts)
    .filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack')
    .map(([stackName, artifact]) => {
      const uploads: Upload[] = [];
      for (const dependency of artifact.dependencies ?? []) {
        const assets = assembly.artifacts[dependency];
        if (assets?.type !== 'cdk:asset-manifest' || !assets.properties?.file) continue;
        const manifest = readJson<AssetManifest>(join(outDirectory, assets.properties.file));
        if (Object.keys(manifest.dockerImages ?? {}).length > 0) {
          throw new Error(`${stackName} has container image assets, which this command does not list`);
        }
        for (const [id, asset] of Object.entries(manifest.files ?? {})) {
          for (const destination of Object.values(asset.destinations)) {
            if (destination.bucketName.includes('${')) {
              throw new Error(
                `${stackName}'s assets go to cdk bootstrap's bucket (${destination.bucketName}): synthesise with -c assetBucket=<bucket>`,
              );
            }
            uploads.push({
              name: asset.displayName ?? id,
              source: asset.source.path,
              packaging: asset.source.packaging ?? 'file',
              bucket: destination.bucketName,
              key: destination.objectKey,
            });
          }
        }
      }
      const template = artifact.properties?.templateFile ?? `${stackName}.template.json`;
      const templateUpload = uploads.find((upload) => upload.source === template);
      if (!templateUpload) throw new Error(`${stackName}: the asset manifest does not list the template`);
      return {
        stackName,
        template,
        templateObject: `s3://${templateUpload.bucket}/${templateUpload.key}`,
        uploads,
      };
    });
}

const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/** A POSIX shell script that zips and copies every upload, run from anywhere (it finds the assembly beside it). */
export function uploadScript(stacks: readonly StackForCloudFormation[]): string {
  const lines = [
    '#!/bin/sh',
    '# Written by `npm run synth:template`: puts every file the templates expect in S3 (needs zip and the AWS CLI).',
    'set -eu',
    'cd "$(dirname "$0")"',
    'work=$(mktemp -d)',
    'trap \'rm -rf "$work"\' EXIT',
  ];
  for (const stack of stacks) {
    lines.push(`# ${stack.stackName}: then create or update it from ${stack.templateObject}`);
    for (const upload of stack.uploads) {
      const target = quote(`s3://${upload.bucket}/${upload.key}`);
      if (upload.packaging === 'zip') {
        const zip = `"$work"/${quote(upload.key)}`;
        lines.push(`(cd ${quote(upload.source)} && zip -qrX ${zip} .) && aws s3 cp ${zip} ${target}  # ${upload.name}`);
      } else {
        lines.push(`aws s3 cp ${quote(upload.source)} ${target}  # ${upload.name}`);
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Synthesises the app into `outDirectory` with `cdk synth` and the given arguments, and writes the upload list. */
export function synthTemplate(
  cdkArguments: readonly string[],
  outDirectory = DEFAULT_OUTPUT,
): StackForCloudFormation[] {
  if (!cdkArguments.some((argument) => argument.startsWith('assetBucket='))) {
    throw new Error(
      'Name the S3 bucket the assets go to: npm run synth:template -- -c assetBucket=<bucket> (docs/aws.md, "Deploying with CloudFormation alone")',
    );
  }
  const out = resolve(outDirectory);
  rmSync(out, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [join(REPO_ROOT, 'node_modules', 'aws-cdk', 'bin', 'cdk'), 'synth', '--quiet', '--output', out, ...cdkArguments],
    { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const stacks = stacksOf(out);
  writeFileSync(join(out, 'upload.json'), `${JSON.stringify(stacks, undefined, 2)}\n`);
  writeFileSync(join(out, 'upload-assets.sh'), uploadScript(stacks));
  chmodSync(join(out, 'upload-assets.sh'), 0o755);
  return stacks;
}

/** `--output <dir>` is this script's; everything else is `cdk synth`'s. */
function parseArguments(argv: readonly string[]): { outDirectory: string; cdkArguments: string[] } {
  const cdkArguments: string[] = [];
  let outDirectory = DEFAULT_OUTPUT;
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i]!;
    if (argument === '--output' || argument === '-o') outDirectory = argv[++i] ?? DEFAULT_OUTPUT;
    else if (argument.startsWith('--output=')) outDirectory = argument.slice('--output='.length);
    else cdkArguments.push(argument);
  }
  return { outDirectory, cdkArguments };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { outDirectory, cdkArguments } = parseArguments(process.argv.slice(2));
  let stacks: StackForCloudFormation[] = [];
  try {
    stacks = synthTemplate(cdkArguments, outDirectory);
  } catch (error) {
    // A usage error or a failed synth (whose own output is above): the reason, not a stack trace.
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
  const relativeOut = relative(process.cwd(), resolve(outDirectory));
  const out = relativeOut.startsWith('..') ? resolve(outDirectory) : relativeOut || '.';
  for (const stack of stacks) {
    console.log(`${stack.stackName}: template ${join(out, stack.template)}, ${stack.uploads.length} files to upload`);
    for (const upload of stack.uploads) {
      const what = upload.packaging === 'zip' ? `${join(out, upload.source)}/ zipped` : join(out, upload.source);
      console.log(`  ${what} -> s3://${upload.bucket}/${upload.key}  (${upload.name})`);
    }
    console.log(`  then create or update the stack from ${stack.templateObject} (its https:// URL)`);
  }
  console.log(
    `Upload them all: ${join(out, 'upload-assets.sh')} (zip and the AWS CLI); the list: ${join(out, 'upload.json')}`,
  );
}
