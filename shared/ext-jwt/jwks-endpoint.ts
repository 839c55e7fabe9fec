/**
 * Why a URL cannot be a signer's JWKS endpoint, or undefined when it can: an https URL with a host and no user name
 * or password. Credentials in the URL would be sent with every fetch and shown to every admin who reads the signer,
 * and `https://idp.example.com@elsewhere.example/` names another host than it seems to.
 */
export function jwksEndpointProblem(endpoint: string): string | undefined {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return 'must be an https URL';
  }
  if (url.protocol !== 'https:' || url.hostname === '') return 'must be an https URL';
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  return undefined;
}
