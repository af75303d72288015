// Command sqlite does nothing, with go-sdk's mcp package and the SQLite
// driver (modernc.org/sqlite, in pure Go) linked in (bench -startup).
package main

import (
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "modernc.org/sqlite"
)

func main() {}
