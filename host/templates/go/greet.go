package main

// greeting is what the `greet` tool answers (kept apart from the ABI glue so
// `go test` runs it on your machine).
func greeting(name string) string {
	return "Hello, " + name + "!"
}
