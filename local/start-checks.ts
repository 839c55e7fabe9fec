import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { StartRefused } from './start-refused.ts';

/**
 * What `npm start` checks before it changes anything (starts DynamoDB Local, seeds the table, resets a password):
 * that no other controller runs on the data directory, and that the ports it will listen on are free. A start that
 * would fail on either fails at once, in one line, with nothing changed.
 */

/** The lock file in the data directory: the pid of the controller that runs on it. */
export const DATA_LOCK_FILE = 'controller.lock';

/** Whether a process of this pid runs (a signal 0 reaches it, or it is another user's). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the data directory for this process: refused while another live controller holds it; a lock its dead holder
 * left is taken over. Given back when this process exits, however it exits.
 */
export function lockDataDirectory(dataDir: string): void {
  const path = join(dataDir, DATA_LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      process.once('exit', () => {
        try {
          if (readFileSync(path, 'utf8') === String(process.pid)) unlinkSync(path);
        } catch {
          // Gone already: nothing to give back.
        }
      });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number(readFileSync(path, 'utf8').trim());
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isRunning(holder)) {
      throw new StartRefused(
        `another controller (pid ${holder}) runs on the data directory ${dataDir}: stop it, or set ` +
          'CONTROLLER_DATA_DIR to another directory.',
      );
    }
    // Its holder is gone (killed without its exit handlers): the directory is free.
    unlinkSync(path);
  }
  throw new StartRefused(
    `the data directory ${dataDir} could not be locked (${path}): remove that file if no controller runs.`,
  );
}

/** A port the controller will listen on, and the setting that chooses it. */
export interface PlannedListener {
  readonly port: number;
  readonly host: string;
  readonly setting: string;
}

/** Refuses the start when one of the ports is taken (or not allowed), naming the setting to change. */
export async function checkPortsFree(listeners: readonly PlannedListener[]): Promise<void> {
  for (const { port, host, setting } of listeners) {
    await new Promise<void>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', (error: NodeJS.ErrnoException) => reject(portRefusal(error, port, host, setting)));
      probe.listen(port, host, () => probe.close(() => resolve()));
    });
  }
}

/** A listener's failure as the one line that says what to change; any other error as it is. */
export function portRefusal(error: NodeJS.ErrnoException, port: number, host: string, setting: string): Error {
  const where = `port ${port} on ${host}`;
  if (error.code === 'EADDRINUSE') {
    return new StartRefused(`${where} is in use: set ${setting} to a free port, or stop what listens there.`);
  }
  if (error.code === 'EACCES') {
    return new StartRefused(`${where} needs privileges this process lacks: set ${setting} to a port above 1023.`);
  }
  return error;
}
