package upstream_test

// ownerMain does nothing on Windows: the pool-owner tests (supervisor_test.go)
// need Linux.
func ownerMain() {}
