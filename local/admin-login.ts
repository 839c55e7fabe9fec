import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Where `npm start` keeps the password it generated for the default admin: the data directory, owner-only. */
export const ADMIN_PASSWORD_FILE = 'admin-password';

/** The flag of `npm start` that gives the default admin a new password. */
export const RESET_FLAG = '--reset-admin-password';

/** Where the password this controller knows comes from: the setting, or the file of a generated one. */
export type KnownPassword =
  | { readonly kind: 'setting'; readonly password: string }
  | { readonly kind: 'file'; readonly password: string; readonly file: string };

/**
 * Keeps a generated password for the next start's banner. The data directory already holds the network's private
 * keys, so this adds nothing to what reading it gives; the file is readable by its owner alone all the same.
 */
export function keepGeneratedPassword(file: string, password: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${password}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
}

/** The generated password kept by an earlier start, if any. */
export function keptPassword(file: string): KnownPassword | undefined {
  try {
    const password = readFileSync(file, 'utf8').trim();
    return password ? { kind: 'file', password, file } : undefined;
  } catch {
    return undefined;
  }
}

/** `text` as one single-quoted shell word. */
function singleQuoted(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** `text` inside a double-quoted shell word: only `\`, `"`, `$` and `` ` `` are special there. */
function insideDoubleQuotes(text: string): string {
  return text.replace(/[\\"$`]/g, '\\$&');
}

export interface AdminLoginOptions {
  /** e.g. `https://localhost:1280` */
  readonly origin: string;
  readonly port: number;
  readonly username: string;
  /** The password this controller knows, and whether the default admin logs in with it. */
  readonly known: KnownPassword | undefined;
  readonly works: boolean;
  /** Whether the banner goes to a person's terminal (a password is never written into a log). */
  readonly onTerminal: boolean;
  /** The file a generated password is kept in. */
  readonly passwordFile: string;
}

/**
 * The banner's login: commands that log in as pasted into a POSIX shell when the password is known and still
 * works (the password itself only on a terminal, elsewhere read from where it is kept), else why not and how to
 * set a new one.
 */
export function adminLoginLines(options: AdminLoginOptions): string[] {
  const { origin, port, username, known, works, onTerminal } = options;
  const reset = `npm start -- ${RESET_FLAG}`;
  if (!known || !works) {
    const why = !known
      ? 'this controller does not know the default admin password (an older start showed it once)'
      : `the admin password ${known.kind === 'file' ? `kept in ${known.file}` : 'in CONTROLLER_ADMIN_PASSWORD'} ` +
        'no longer logs in (changed through the API?)';
    return [
      `Log in as "${username}": ${why}.`,
      `  Set a new one with: ${reset}  (it takes CONTROLLER_ADMIN_PASSWORD, else generates one and keeps it in ` +
        `${options.passwordFile})`,
    ];
  }
  const url = singleQuoted(`${origin}/edge/management/v1/authenticate?method=password`);
  const curl = (body: string) => `  curl -sk -X POST ${url} -H 'content-type: application/json' -d ${body}`;
  const user = insideDoubleQuotes(JSON.stringify(username).slice(1, -1));
  const withVariable = (variable: string) => [
    curl(`"{\\"username\\":\\"${user}\\",\\"password\\":\\"$${variable}\\"}"`),
    `  ziti edge login localhost:${port} -u ${singleQuoted(username)} -p "$${variable}" -y`,
  ];
  let commands: string[];
  if (known.kind === 'setting') {
    commands = ['  (in a shell where CONTROLLER_ADMIN_PASSWORD is set)', ...withVariable('CONTROLLER_ADMIN_PASSWORD')];
  } else if (onTerminal) {
    commands = [
      curl(singleQuoted(JSON.stringify({ username, password: known.password }))),
      `  ziti edge login localhost:${port} -u ${singleQuoted(username)} -p ${singleQuoted(known.password)} -y`,
    ];
  } else {
    commands = [`  ZT_ADMIN_PASSWORD=$(cat ${singleQuoted(known.file)})`, ...withVariable('ZT_ADMIN_PASSWORD')];
  }
  return [
    `Log in as "${username}"${known.kind === 'file' ? ` (password kept in ${known.file})` : ''}:`,
    ...commands,
    'then send the returned token in the zt-session header.',
    `Password lost or changed? ${reset} sets a new one.`,
  ];
}
