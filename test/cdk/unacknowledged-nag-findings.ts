import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { FAIL_SYNTH_ON_VALIDATION_ERRORS_CONTEXT, VALIDATION_REPORT_FILE } from 'aws-cdk-lib/cx-api';
import { AwsSolutionsChecks, type NagPack, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
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

/** What cdk-nag says of an app. */
export interface NagReport {
  /** Errors and warnings nobody acknowledged, one line each: `<severity> <rule> at <construct path>: <why>`. */
  readonly findings: string[];
  /**
   * Acknowledgements of a nag rule that suppressed nothing, one line each: `<rule> at <construct path>`. A finding that
   * went away (fixed, or its construct changed) would otherwise leave its acknowledgement behind as a stale claim.
   */
  readonly unusedAcknowledgements: string[];
}

const NAG_PACKS = ['AwsSolutions', 'Serverless'];

/** A rule id as acknowledged, without the namespace CDK records it under (`Annotation::AwsSolutions-S1`). */
const ruleOf = (id: string) => id.replace(/^[A-Za-z]+::/, '');
const isNagRule = (id: string) => NAG_PACKS.some((pack) => id.startsWith(`${pack}-`));

/** The nag rules acknowledged on a construct itself (`Validations.of(construct).acknowledge`). */
function acknowledgedOn(construct: IConstruct): string[] {
  return construct.node.metadata
    .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY && entry.data)
    .flatMap((entry) => Object.keys(entry.data as Record<string, string>).map(ruleOf))
    .filter(isNagRule);
}

/**
 * Records which acknowledgement suppressed each finding the pack skips: cdk-nag looks for the rule on the resource
 * and then on each ancestor, and the nearest acknowledgement is the one that counts.
 */
function recordUsedAcknowledgements(pack: NagPack, used: Set<string>): void {
  const checked = pack as unknown as { isAcknowledged(resource: IConstruct, ruleId: string): boolean };
  const isAcknowledged = checked.isAcknowledged.bind(pack);
  checked.isAcknowledged = (resource, ruleId) => {
    const acknowledged = isAcknowledged(resource, ruleId);
    for (let scope: IConstruct | undefined = resource; acknowledged && scope; scope = scope.node.scope) {
      if (!acknowledgedOn(scope).includes(ruleId)) continue;
      used.add(`${ruleId} at ${scope.node.path}`);
      break;
    }
    return acknowledged;
  };
}

/**
 * Synthesises the stacks `build` adds to a fresh app with cdk-nag's AwsSolutions and Serverless packs, and returns
 * every error and warning nobody acknowledged, one line each: `<severity> <rule> at <construct path>: <why>`.
 */
export function unacknowledgedNagFindings(build: (app: App) => void): string[] {
  return nagReport(build).findings;
}

/** {@link unacknowledgedNagFindings}, and the acknowledgements of the app that suppressed no finding. */
export function nagReport(build: (app: App) => void): NagReport {
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
    const used = new Set<string>();
    const packs = [new AwsSolutionsChecks(app, { verbose: true }), new ServerlessChecks(app, { verbose: true })];
    for (const pack of packs) recordUsedAcknowledgements(pack, used);
    Validations.of(app).addPlugins(...packs);
    const assembly = app.synth();
    const report = JSON.parse(
      readFileSync(join(assembly.directory, VALIDATION_REPORT_FILE), 'utf8'),
    ) as ValidationReport;
    const findings = report.pluginReports
      .filter((plugin) => NAG_PACKS.includes(plugin.pluginName))
      .flatMap((plugin) =>
        plugin.violations.flatMap((violation) =>
          violation.violatingConstructs.map(
            (construct) =>
              `${violation.severity} ${violation.ruleName} at ${construct.constructPath}: ${violation.description}`,
          ),
        ),
      );
    const unusedAcknowledgements = app.node
      .findAll()
      .flatMap((construct) => acknowledgedOn(construct).map((rule) => `${rule} at ${construct.node.path}`))
      .filter((acknowledgement) => !used.has(acknowledgement));
    return { findings, unusedAcknowledgements };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
