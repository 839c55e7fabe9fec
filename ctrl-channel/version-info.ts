/**
 * The build a peer reports in its hello's version header, as the reference encodes it (`foundation/versions`):
 * `version|revision|buildDate|os|arch`. The reference refuses a router whose header is missing or not five fields.
 */
export interface VersionInfo {
  readonly version: string;
  readonly revision: string;
  readonly buildDate: string;
  readonly os: string;
  readonly arch: string;
}

/**
 * The version this controller reports in its hello answer and its edge hello: the OpenZiti release whose control
 * channel it speaks, not its own (v0.x) version. A router compares it with `HasMinimumVersion` to choose how to behave:
 * below 0.30.0 it keys its links the legacy way, below 1.6.3 it never reports its network interfaces. Revision and
 * build date stay ours.
 */
export const CTRL_PROTOCOL_VERSION = 'v2.0.0';

// Each field is a short token in practice (v2.0.0, a commit hash, a date, linux, amd64); longer is no build's.
const MAX_FIELD_LENGTH = 128;

export function encodeVersionInfo(info: VersionInfo): Buffer {
  return Buffer.from([info.version, info.revision, info.buildDate, info.os, info.arch].join('|'));
}

/** The version info of a header, or undefined when it is not five printable fields. */
export function decodeVersionInfo(header: Buffer | undefined): VersionInfo | undefined {
  if (!header) return undefined;
  const fields = header.toString('utf8').split('|');
  if (fields.length !== 5) return undefined;
  if (fields.some((field) => field.length > MAX_FIELD_LENGTH || /[\p{Cc}]/u.test(field))) return undefined;
  const [version, revision, buildDate, os, arch] = fields as [string, string, string, string, string];
  return { version, revision, buildDate, os, arch };
}
