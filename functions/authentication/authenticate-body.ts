import * as z from 'zod';
import { envInfoSchema, sdkInfoSchema } from '#shared/entities/identity.ts';
import { passwordField, usernameField } from '#shared/schemas/credential-fields.ts';

const limited = (max: number) => z.string().max(max);

/**
 * Every login stores its config types with its session, so they are bounded: SDKs send a handful of short ids or
 * names (`ziti-tunneler-client.v1`, `intercept.v1`, `all`), never near these.
 */
const MAX_CONFIG_TYPES = 32;
const MAX_CONFIG_TYPE_LENGTH = 64;

/** The optional body of `POST /authenticate`; unknown keys are ignored, as the reference does. */
export const authenticateBodySchema = z
  .object({
    username: z.string().optional(),
    password: z.string().optional(),
    configTypes: z
      .array(z.string().max(MAX_CONFIG_TYPE_LENGTH, { message: `at most ${MAX_CONFIG_TYPE_LENGTH} characters` }))
      .max(MAX_CONFIG_TYPES, { message: `at most ${MAX_CONFIG_TYPES} config types` })
      .transform((types) => [...new Set(types)])
      .optional(),
    envInfo: envInfoSchema
      .extend({
        arch: limited(255).optional(),
        domain: limited(253).optional(),
        hostname: limited(253).optional(),
        os: limited(255).optional(),
        osRelease: limited(255).optional(),
        osVersion: limited(255).optional(),
      })
      .optional(),
    sdkInfo: sdkInfoSchema
      .extend({
        appId: limited(255).optional(),
        appVersion: limited(255).optional(),
        branch: limited(255).optional(),
        revision: limited(255).optional(),
        type: limited(255).optional(),
        version: limited(255).optional(),
      })
      .optional(),
  })
  .default({});
export type AuthenticateBody = z.infer<typeof authenticateBodySchema>;

export const passwordCredentialsSchema = z.object({ username: usernameField, password: passwordField });

export const AUTH_METHODS = ['password', 'cert', 'ext-jwt'] as const;
export type AuthMethod = (typeof AUTH_METHODS)[number];
