/**
 * The integrity run's state machine, in Amazon States Language: the one definition the CDK stack deploys and the local
 * runner executes. Every Task calls the integrity function (`functions/integrity/handler.ts`) with an `action`:
 *
 * 1. `ScanSegments`: a Map over the segment numbers, each `scan` checking (or fixing) one parallel Scan segment and
 *    storing its findings in the table; only counts travel through the state machine (payloads are capped at 256 KB).
 * 2. `Finish`: `finish` reconciles the counters with the counted entities and writes the results, freeing the lock.
 * 3. Any failure: `RecordFailure` (`fail`) records the error and frees the lock, then the run fails.
 */
export const SCAN_STATE = 'ScanSegment';
export const FINISH_STATE = 'Finish';
export const FAILURE_STATE = 'RecordFailure';

export function integrityStateMachineDefinition(functionArn: string): Record<string, unknown> {
  const catchAll = [{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: FAILURE_STATE }];
  const retry = [
    {
      ErrorEquals: ['Lambda.ServiceException', 'Lambda.TooManyRequestsException', 'Lambda.SdkClientException'],
      IntervalSeconds: 2,
      MaxAttempts: 3,
      BackoffRate: 2,
    },
  ];
  return {
    Comment: 'Ziti controller: data-integrity check or fix over parallel scan segments',
    StartAt: 'ScanSegments',
    States: {
      ScanSegments: {
        Type: 'Map',
        ItemsPath: '$.segments',
        ItemSelector: {
          'runId.$': '$.runId',
          'mode.$': '$.mode',
          'totalSegments.$': '$.totalSegments',
          'segment.$': '$$.Map.Item.Value',
        },
        ItemProcessor: {
          ProcessorConfig: { Mode: 'INLINE' },
          StartAt: SCAN_STATE,
          States: {
            [SCAN_STATE]: {
              Type: 'Task',
              Resource: functionArn,
              Parameters: {
                action: 'scan',
                'runId.$': '$.runId',
                'mode.$': '$.mode',
                'segment.$': '$.segment',
                'totalSegments.$': '$.totalSegments',
              },
              Retry: retry,
              End: true,
            },
          },
        },
        ResultPath: '$.segmentResults',
        Catch: catchAll,
        Next: FINISH_STATE,
      },
      [FINISH_STATE]: {
        Type: 'Task',
        Resource: functionArn,
        Parameters: { action: 'finish', 'runId.$': '$.runId', 'mode.$': '$.mode', 'segments.$': '$.segmentResults' },
        Retry: retry,
        Catch: catchAll,
        End: true,
      },
      [FAILURE_STATE]: {
        Type: 'Task',
        Resource: functionArn,
        Parameters: { action: 'fail', 'runId.$': '$.runId', 'failure.$': '$.failure' },
        Retry: retry,
        Next: 'Failed',
      },
      Failed: { Type: 'Fail', Error: 'IntegrityRunFailed', Cause: 'The integrity run failed; see its results.' },
    },
  };
}
