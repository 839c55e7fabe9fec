import * as z from 'zod';

/** A updb username: 4 to 100 characters (spec §2.6, §8). */
export const usernameField = z.string().min(4).max(100);

/** A updb password, also the `currentPassword` of self-service changes: 5 to 100 characters (spec §2.6, §8). */
export const passwordField = z.string().min(5).max(100);
