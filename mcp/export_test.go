package mcp

// CheckTypedOutputs is checkTypedOutputs for the external tests.
func CheckTypedOutputs(s *Server, seed int64, n int) (tools int, failure string) {
	return checkTypedOutputs(s, seed, n)
}
