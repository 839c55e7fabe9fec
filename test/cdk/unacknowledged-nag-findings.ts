import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { FAIL_SYNTH_ON_VALIDATION_ERRORS_CONTEXT, VALIDATION_REPORT_FILE } from 'aws-cdk-lib/cx-api';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { cdkJsonContext } from './synth-context.ts';

/** The part of CDK's validation report (`validation-report.json` in the cloud assembly) read here. */
interface ValidationReport {
  readonly pluginReports: readonly {
    readonly pluginName: string;
    readonly violations: readonly {
      readonly ruleName: string;
      readonly description: string;
      readonly severity: string;
      readonly violatingConstructs: readonly { readonly constructPath?: string }[];
    }[];
  }[];
}

const NAG_PACKS = ['AwsSolutions', 'Serverless'];

/**
 * Synthesises the stacks `build` adds to a fresh app with cdk-nag's AwsSolutions and Serverless packs, and returns
 * every error and warning nobody acknowledged, one line each: `<severity> <rule> at <construct path>: <why>`.
 */
export function unacknowledgedNagFindings(build: (app: App) => void): string[] {
  const outdir = mkdtempSync(join(tmpdir(), 'cdk-nag-'));
  try {
    const app = new App({
      outdir,
      // CDK's own template validation is not what is checked here, and loading its schemas adds ten seconds.
      builtinCloudFormationValidation: false,
      context: {
        ...cdkJsonContext(),
        // Bundling skipped: the template does not depend on the bundle, and esbuild would dominate the run.
        'aws:cdk:bundling-stacks': [],
        // The synth would throw on the first error and only log warnings; the report holds both.
        [FAIL_SYNTH_ON_VALIDATION_ERRORS_CONTEXT]: false,
      },
    });
    build(app);
    Validations.of(app).addPlugins(
      new AwsSolutionsChecks(app, { verbose: true }),
      new ServerlessChecks(app, { verbose: true }),
    );
    const assembly = app.synth();
    const report = JSON.parse(
      readFileSync(join(assembly.directory, VALIDATION_REPORT_FILE), 'utf8'),
    ) as ValidationReport;
    return report.pluginReports
      .filter((plugin) => NAG_PACKS.includes(plugin.pluginName))
      .flatMap((plugin) =>
        plugin.violations.flatMap((violation) =>
          violation.violatingConstructs.map(
            (construct) =>
              `${violation.severity} ${violation.ruleName} at ${construct.constructPath}: ${violation.description}`,
          ),
        ),
      );
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
