// Command gosdk does nothing, with go-sdk's mcp package linked in: about
// what the bare cold client carries (bench -startup).
package main

import _ "github.com/modelcontextprotocol/go-sdk/mcp"

func main() {}
