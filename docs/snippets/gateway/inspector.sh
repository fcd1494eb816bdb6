# In the folder of interlock.config.yaml. The Inspector's 0.16 command-line client
# runs on Node 20.18 and later (later ones need Node 22.7, or their own folder).

# Over stdio: the Inspector starts the gateway itself.
npx -y @modelcontextprotocol/inspector-cli@0.16.8 --cli \
  --method tools/list -- npx -y -p mcp-interlock interlock serve

# Over HTTP: start the gateway, then call it with a caller's key (READER_KEY).
npx -y -p mcp-interlock interlock serve --http --port 8080 &
npx -y @modelcontextprotocol/inspector-cli@0.16.8 --cli \
  http://127.0.0.1:8080/mcp --transport http \
  --header "Authorization: Bearer $READER_KEY" \
  --method tools/call --tool-name mcp__notes__read_note \
  --tool-arg id=drafts/welcome
