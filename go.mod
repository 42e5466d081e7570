module github.com/mcprt/mcprt

go 1.26.5
