// The client the official MCP conformance suite (`@modelcontextprotocol/conformance`) launches once per client
// scenario: `node --import tsx test/conformance/client.ts <server-url>`, with the scenario's name in
// MCP_CONFORMANCE_SCENARIO and, for scenarios that hand out credentials, a JSON object in MCP_CONFORMANCE_CONTEXT.
// It uses only Interlock's public entry points, the way an application would: one MCPClientManager, OAuth through
// createServerAuth, and a capability set that grants this one server. It connects (which lists the tools) and, per
// scenario, calls each tool once, the calls the scenario's context scripts, lists and loads skills, or nothing more;
// the suite's server judges what went over the wire. Exit code 0 when every step worked, 1 on the first failure.
import { createServerAuth } from 'mcp-interlock/auth';
import { MCPClientManager, type MCPServerConfigInput } from 'mcp-interlock/interop';
import { CapabilitySet } from 'mcp-interlock/security';

const SERVER = 'conformance';

/** A client ID metadata document URL: used as client_id when the authorization server supports them. */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

/** What MCP_CONFORMANCE_CONTEXT may hold; each scenario sets the fields it needs. */
interface ScenarioContext {
  client_id?: string;
  client_secret?: string;
  private_key_pem?: string;
  signing_algorithm?: string;
  idp_id_token?: string;
  idp_issuer?: string;
  idp_token_endpoint?: string;
  idp_client_id?: string;
  /** A workload's JWT for the JWT bearer grant (workload identity federation). */
  valid_jwt?: string;
  /** Calls a scenario wants made with exactly these arguments (e.g. values that need Base64 in headers). */
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
}

/** Scenarios whose server judges the connect and the tool listing alone. */
const LIST_ONLY = new Set(['initialize', 'request-metadata', 'json-schema-ref-no-deref']);

/**
 * The Skills extension (SEP-2640) scenarios. In each the client lists the server's skills; in `no-prefetch` that is
 * all (a host retrieves no skill file ahead of need), in the `verify-*` ones it then loads the first skill: its
 * SKILL.md, verified against the entry, then each other listed file. Their servers tamper with SKILL.md, so loading
 * stops at the verification failure (SKILL_VERIFICATION_FAILED) and no further file is read.
 */
const SKILLS_LIST_ONLY = 'sep-2640-client-no-prefetch';
const SKILLS_LOAD = /^sep-2640-client-verify-/;

function readContext(): ScenarioContext {
  const raw = process.env.MCP_CONFORMANCE_CONTEXT;
  return raw === undefined || raw === '' ? {} : (JSON.parse(raw) as ScenarioContext);
}

type OAuthInput = NonNullable<Extract<MCPServerConfigInput, { transport: 'http' }>['auth']>;

/** The `auth` block of the server config for a scenario; undefined for scenarios without authorization. */
export function authFor(scenario: string, context: ScenarioContext): OAuthInput | undefined {
  if (!scenario.startsWith('auth/')) return undefined;
  if (scenario === 'auth/client-credentials-jwt') {
    return {
      type: 'oauth',
      grant: 'client_credentials',
      clientId: context.client_id,
      privateKey: context.private_key_pem,
      signingAlgorithm: context.signing_algorithm ?? 'ES256',
      tokenEndpointAuthMethod: 'private_key_jwt',
    };
  }
  if (scenario === 'auth/client-credentials-basic') {
    return {
      type: 'oauth',
      grant: 'client_credentials',
      clientId: context.client_id,
      clientSecret: context.client_secret,
      tokenEndpointAuthMethod: 'client_secret_basic',
    };
  }
  if (context.valid_jwt !== undefined) {
    // Workload identity federation (SEP-1933): the workload's own JWT is the grant.
    return {
      type: 'oauth',
      grant: 'jwt_bearer',
      clientId: context.client_id,
      assertion: context.valid_jwt,
      tokenEndpointAuthMethod: 'none',
    };
  }
  if (context.idp_id_token !== undefined) {
    // Cross-app access (SEP-990): the ID token becomes an ID-JAG at the identity provider, then an access token.
    return {
      type: 'oauth',
      grant: 'cross_app_access',
      clientId: context.client_id,
      clientSecret: context.client_secret,
      idp: {
        tokenEndpoint: context.idp_token_endpoint,
        issuer: context.idp_issuer,
        clientId: context.idp_client_id ?? '',
        idToken: context.idp_id_token,
      },
    };
  }
  if (context.client_id !== undefined) {
    // Pre-registered client (no dynamic registration).
    return { type: 'oauth', clientId: context.client_id, clientSecret: context.client_secret };
  }
  // DPoP (SEP-1932) is opt-in: the scenarios that test it get it.
  const dpop = scenario.startsWith('auth/dpop') ? { dpop: true } : {};
  return { type: 'oauth', clientMetadataUrl: CLIENT_METADATA_URL, ...dpop };
}

/** Plays the user's browser: follows the authorization URL, whose redirect lands on the loopback receiver. */
async function approveInBrowser(url: URL): Promise<void> {
  const response = await fetch(url, { redirect: 'manual' });
  const location = response.headers.get('location');
  if (location === null)
    throw new Error(`the authorization endpoint answered ${response.status}, no redirect`);
  await fetch(new URL(location, url));
}

/** Arguments that satisfy a tool's input schema: a plain value of each required property's type. */
export function sampleArguments(schema: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown; enum?: unknown[] }>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const out: Record<string, unknown> = {};
  for (const name of required) {
    const property = properties[name] ?? {};
    if (Array.isArray(property.enum) && property.enum.length > 0) out[name] = property.enum[0];
    else if (property.type === 'number' || property.type === 'integer') out[name] = 1;
    else if (property.type === 'boolean') out[name] = true;
    else if (property.type === 'array') out[name] = [];
    else if (property.type === 'object') out[name] = {};
    else out[name] = 'conformance';
  }
  return out;
}

/**
 * The arguments without `null` values of optional properties. Interlock validates
 * arguments against the tool's schema before sending and refuses such a value (fails closed); the header scenario
 * (SEP-2243) accepts the property "null or not provided" alike, so it is left out.
 */
function withoutNulls(
  args: Record<string, unknown>,
  schema: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  return Object.fromEntries(Object.entries(args).filter(([k, v]) => v !== null || required.has(k)));
}

async function main(): Promise<void> {
  const url = process.argv[2];
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  if (url === undefined)
    throw new Error('usage: client.ts <server-url> (MCP_CONFORMANCE_SCENARIO names the scenario)');
  const context = readContext();

  const capabilities = new CapabilitySet();
  capabilities.grant(`mcp:${SERVER}:*`, 'execute');
  capabilities.grant(`mcp:${SERVER}:elicitation`, 'request');
  capabilities.grant(`mcp:${SERVER}:skill:*`, 'read');
  await using manager = new MCPClientManager({
    capabilities,
    serverAuth: createServerAuth({ openUrl: approveInBrowser }),
    // SEP-1034: accept with no content; Interlock fills in the defaults the form declares.
    onElicitation: () => ({ action: 'accept', content: {} }),
  });
  const auth = authFor(scenario, context);
  await manager.connectServer({
    name: SERVER,
    transport: 'http',
    url,
    ...(auth === undefined ? {} : { auth }),
  });
  if (LIST_ONLY.has(scenario)) return;
  if (scenario === SKILLS_LIST_ONLY || SKILLS_LOAD.test(scenario)) {
    const [skill] = await manager.listSkills(SERVER);
    if (scenario === SKILLS_LIST_ONLY) return;
    if (skill === undefined) throw new Error('the server lists no skill');
    const manifest = await manager.readSkill(SERVER, skill);
    const files = skill.resources === 'dynamic' ? [] : skill.resources;
    for (const file of files)
      if (file.uri !== manifest.uri) await manager.readSkill(SERVER, skill, { file: file.uri });
    return;
  }
  const byTool = (name: string) => {
    const tool = manager.tools.find((t) => t.tool === name);
    if (tool === undefined) throw new Error(`the server lists no tool '${name}'`);
    return tool;
  };
  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await manager.callTool(name, args);
    if (result.isError) throw new Error(`${name} failed: ${result.text}`);
  };
  if (context.toolCalls !== undefined) {
    for (const c of context.toolCalls) {
      const tool = byTool(c.name);
      await call(tool.name, withoutNulls(c.arguments, tool.inputSchema));
    }
    return;
  }
  if (scenario === 'json-schema-2020-12-preservation') {
    // SEP-1613: the input schema a server sent comes back unchanged, 2020-12 keywords and all.
    const schema = byTool('json_schema_2020_12_tool').inputSchema;
    await call(byTool('json_schema_echo').name, { schema });
    return;
  }
  for (const tool of manager.tools) await call(tool.name, sampleArguments(tool.inputSchema));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    process.exit(1);
  },
);
