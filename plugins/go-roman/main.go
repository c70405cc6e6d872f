// Package main is the `go-roman` Wharf plugin. Built with -buildmode=c-shared for
// wasip1 it is a reactor: main never runs; the exports in abi.go are the API.
package main

func main() {}
