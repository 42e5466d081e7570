module github.com/mcprt/mcprt

go 1.26.5

require (
	github.com/google/go-cmp v0.7.0
	github.com/google/gofuzz v1.2.0
	github.com/kaptinlin/jsonschema v0.9.8
)

require (
	github.com/go-json-experiment/json v0.0.0-20260623181947-01eb4420fa68 // indirect
	github.com/goccy/go-yaml v1.19.2 // indirect
	github.com/kaptinlin/jsonpointer v0.4.28 // indirect
)
