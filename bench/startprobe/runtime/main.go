// Command runtime does nothing: a Go process's start-up and exit with the
// runtime alone (bench -startup).
package main

func main() {}
