package mcp

// ExtensionTasks is the identifier of the tasks extension: long-running
// tool calls the client polls with tasks/get.
const ExtensionTasks = "io.modelcontextprotocol/tasks"

// taskStore holds the tasks of the tasks extension (see the tasks files).
type taskStore struct{}
