package domain

import (
	"context"
	"strings"

	"github.com/mcprt/mcprt/mcp"
)

// PromptCheckInbox is the prompt that asks the model to read and answer
// its agent inbox.
const PromptCheckInbox = "check_inbox"

// DefaultInstructions is what initialize tells a model when
// server.instructions is empty: in a few lines, who it is (agentID, the
// configured aacp.agentId, or how to get one when it is ""), when to check
// its inbox and how to answer. Language models read it at the start of
// every session, so it stays short.
func DefaultInstructions(agentID string) string {
	var b strings.Builder
	b.WriteString("mcprt connects you with other AI coding sessions: messages (aacp_*), shared memory (memory_*) " +
		"and, where offered, path reservations and tasks.\n")
	if agentID != "" {
		b.WriteString("You are agent \"" + agentID + "\"; other sessions send to that id.\n")
	} else {
		b.WriteString("You have no agent id yet: before messaging, call aacp_register_agent with an id naming " +
			"you (e.g. your role) and type AdHoc; other sessions send to that id.\n")
	}
	b.WriteString("Check your inbox at the start of every task and after finishing one: aacp_receive takes your " +
		"messages; act on each, then aacp_ack it (status processed).\n" +
		"Answer a message with aacp_reply where offered, else aacp_send to its sender: a TASK_ASSIGNMENT gets " +
		"TASK_UPDATE messages (progress, then completed or failed with the result).\n" +
		"Before editing files another session may touch, reserve them (reserve_paths) and release them when done.")
	return b.String()
}

// registerInboxPrompt adds check_inbox when aacp_receive is registered.
func registerInboxPrompt(srv *mcp.Server, agentID string) error {
	if _, ok := srv.LookupTool("aacp_receive"); !ok {
		return nil
	}
	return srv.AddPrompt(mcp.Prompt{Name: PromptCheckInbox, Title: "Check inbox",
		Description: "Ask the model to read its agent inbox, act on each message and answer it",
	}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		who := "your agent id"
		if agentID != "" {
			who = "agent \"" + agentID + "\""
		}
		return userPrompt("Check the inbox of "+who,
			"Check your inbox now: call aacp_receive (as "+who+"). For each message: "+
				"if it is a TASK_ASSIGNMENT, say whether you take it, do it or plan it, and send TASK_UPDATE messages to its "+
				"sender (progress, then completed or failed with the result); if it asks a question, answer it "+
				"(aacp_reply where offered, else aacp_send to its sender); then aacp_ack it with status processed. "+
				"Finish with a short summary of what came in and what you did. If the inbox is empty, say so."), nil
	})
}
