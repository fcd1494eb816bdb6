// Test helpers: fixture servers, HTTP server processes, ports and process checks. Import from here.
export {
  createFixtureLog,
  ECHO_TOOL_NAMES,
  FIXTURE_SERVERS_DIR,
  type FixtureLog,
  type FixtureLogEntry,
  type FixtureName,
  fixture,
  nodeFixture,
  readFixtureLog,
  WEIRD_TOOL_NAMES,
} from './fixtures.js';
export {
  DEFAULT_KILL_GRACE_MS,
  DEFAULT_START_TIMEOUT_MS,
  EVERYTHING_BIN,
  type HttpFixtureOptions,
  type HttpServerProcess,
  startEverything,
  startHttpFixture,
} from './http-fixtures.js';
export { acceptsConnections, freePort, waitForPort } from './net.js';
export { descendantPids, isAlive, openFdCount, waitForExit } from './processes.js';
export { connectHttpClient, connectStdioFixture, type SdkClientHandle } from './sdk-client.js';
export { waitUntil } from './wait.js';
