/**
 * The console's HTTP answers (issue 41): every one with the same security headers (a Content-Security-Policy that
 * allows nothing inline and nothing from elsewhere, no sniffing, no framing), and the reading of its forms.
 */

/** The Content-Security-Policy of every console response: nothing inline, nothing from elsewhere. */
const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Headers on every console response. */
export const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  // Not `no-referrer`: under it a browser sends `Origin: null` with a form's POST (Fetch spec), and the Origin
  // check could not tell the console's own forms from a foreign page's. `same-origin` sends no referrer elsewhere.
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

/** A POST's Origin must be the console's own (the front door already refused foreign origins it knows of). */
export function sameOrigin(request: Request, url: URL): boolean {
  return request.headers.get('origin') === url.origin;
}

export async function formOf(request: Request): Promise<Record<string, unknown>> {
  const type = request.headers.get('content-type') ?? '';
  if (!type.startsWith('application/x-www-form-urlencoded') && !type.startsWith('multipart/form-data'))
    return {};
  try {
    return Object.fromEntries((await request.formData()).entries());
  } catch {
    return {};
  }
}

export function redirect(location: string): Response {
  return new Response(null, {
    status: 303,
    headers: { ...SECURITY_HEADERS, location, 'cache-control': 'no-store' },
  });
}

export function plain(status: number, body: string): Response {
  return new Response(body, {
    status,
    headers: {
      ...SECURITY_HEADERS,
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
    },
  });
}
