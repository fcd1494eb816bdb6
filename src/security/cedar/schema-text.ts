/**
 * The text of Interlock's Cedar schema for MCP entities (issue 40): the one source. The shipped file
 * `schema/interlock.cedarschema` is generated from it (test/security/cedar.test.ts checks they are equal;
 * `INTERLOCK_WRITE_GENERATED=1` rewrites the file), so no module reads a file at run time.
 */
export const CEDAR_SCHEMA = `// Interlock's Cedar schema for MCP entities (issue 40). A Cedar policy given to Interlock is validated against
// this schema at load (strict mode); a policy that does not type-check is refused with Cedar's own message.
//
// Every request names one principal, one action and one resource:
// - principal: the agent a call is made by (Agent), or, when the application or the gateway names who the
//   call is for, that caller (Caller). Both may be members of Groups and carry OAuth scopes.
// - resource: what the call touches, one entity per Interlock resource scheme. 'path' is the resource string the
//   native policy matches ('mcp:notes:read_file') and 'depth' its number of ':'-separated segments.
// - context: the call's arguments (one tag per argument), the agent and principal names, and the time.
namespace Interlock {
  // A tool's annotations (MCP ToolAnnotations) with MCP's defaults filled in. Untrusted server hints: use them to
  // deny or ask, never to allow.
  type Annotations = {
    readOnlyHint: Bool,
    destructiveHint: Bool,
    idempotentHint: Bool,
    openWorldHint: Bool,
  };

  // One argument value. 'kind' is its JSON type: "string", "number", "boolean", "null", "array" or "object".
  // 'string', 'long' (a whole number that fits a Cedar Long) and 'bool' hold the value when it has that type;
  // 'length' is a string's length (UTF-16 units) or an array's item count.
  type Value = {
    kind: String,
    string?: String,
    long?: Long,
    bool?: Bool,
    length?: Long,
  };

  // The arguments of one call: 'context.args.hasTag("path") && context.args.getTag("path").string like "/data/*"'.
  entity Arguments tags Value;

  // A group a principal belongs to (from a token's groups claim, or set by the application).
  entity Group;
  // An agent (createAgent's 'name'); '""' when the call names none.
  entity Agent in [Group] = { name: String, scopes: Set<String> };
  // Who a call is made for: a gateway caller (the verified subject) or the application's 'principal'.
  entity Caller in [Group] = { subject: String, scopes: Set<String> };

  // An MCP server, by its configured name. Tools, resources, prompts and server requests are 'in' their server.
  entity Server;

  // An MCP tool, 'mcp:{server}:{tool}' (action execute). 'labels' is empty until session labels exist (issue 42).
  entity Tool in [Server] = {
    path: String,
    depth: Long,
    server: String,
    name: String,
    annotations: Annotations,
    labels: Set<String>,
  };
  // A native (in-process) tool, 'tool:{name}' (action execute).
  entity NativeTool = {
    path: String,
    depth: Long,
    name: String,
    annotations: Annotations,
    labels: Set<String>,
  };
  // An MCP resource, 'mcp-resource:{server}:{uri}' (action read).
  entity Resource in [Server] = {
    path: String,
    depth: Long,
    server: String,
    uri: String,
    annotations: Annotations,
  };
  // An MCP prompt, 'mcp-prompt:{server}:{name}' (action get).
  entity Prompt in [Server] = {
    path: String,
    depth: Long,
    server: String,
    name: String,
    annotations: Annotations,
  };
  // A request a server makes of Interlock while serving a call, 'mcp:{server}:{kind}' (action request); 'kind' is
  // "sampling", "elicitation" or "roots".
  entity ServerRequest in [Server] = {
    path: String,
    depth: Long,
    server: String,
    kind: String,
    annotations: Annotations,
  };

  // What every request carries. 'now' is milliseconds since the epoch.
  type Context = {
    agent?: String,
    principal?: String,
    now: Long,
    args: Arguments,
  };

  action execute appliesTo { principal: [Agent, Caller], resource: [Tool, NativeTool], context: Context };
  action read appliesTo { principal: [Agent, Caller], resource: [Resource], context: Context };
  action get appliesTo { principal: [Agent, Caller], resource: [Prompt], context: Context };
  action request appliesTo { principal: [Agent, Caller], resource: [ServerRequest], context: Context };
}
`;
