package catalog_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/catalog"
)

func Example() {
	dir, _ := os.MkdirTemp("", "catalog-example-")
	defer os.RemoveAll(dir)
	c, err := catalog.Open(filepath.Join(dir, "catalog.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	ctx := context.Background()
	err = c.Put(ctx, &catalog.Entry{
		Server: "github",
		Hash:   "sha256:…", // of the server's definition
		Tools: []*mcp.Tool{
			{Name: "issue_create", Description: "Open a new issue in a repository."},
			{Name: "issue_list", Description: "List a repository's issues."},
		},
		FetchedAt: time.Now(),
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.Search(ctx, "create issue", catalog.SearchOptions{Limit: 1})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range res.Results {
		fmt.Printf("%s/%s: %s\n", r.Server, r.Name, r.Description)
	}
	// Output: github/issue_create: Open a new issue in a repository.
}
