/**
 * How long each kind of authorization-server artefact lives, in seconds (docs/auth.md). Kept apart
 * from provider.ts so that the operator CLI can name them without loading oidc-provider.
 */
export const TTL = {
  AccessToken: 3600,
  AuthorizationCode: 60,
  Interaction: 600,
  Session: 12 * 3600,
  Grant: 90 * 86400,
  RefreshToken: 30 * 86400,
  IdToken: 3600,
  RegistrationAccessToken: 365 * 86400,
} as const;
