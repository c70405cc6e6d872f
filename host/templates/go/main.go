// Package main is the `{{name}}` Wharf plugin. `wharf build` compiles it with
// GOOS=wasip1 GOARCH=wasm -buildmode=c-shared: a reactor whose main never
// runs; the exports in abi.go are what Wharf calls.
package main

func main() {}
