package catalog_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-mcp/switchboard/internal/catalog"
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

// embed stands in for an embedding model: a vector of letter counts.
func embed(text string) []float32 {
	v := make([]float32, 26)
	for _, r := range strings.ToLower(text) {
		if r >= 'a' && r <= 'z' {
			v[r-'a']++
		}
	}
	return v
}

func ExampleCatalog_PutEmbeddings() {
	dir, _ := os.MkdirTemp("", "catalog-example-")
	defer os.RemoveAll(dir)
	c, err := catalog.Open(filepath.Join(dir, "catalog.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	err = c.Put(ctx, &catalog.Entry{Server: "weather", Hash: "h", Tools: []*mcp.Tool{
		{Name: "get_forecast", Description: "Tomorrow's weather for a city."},
	}})
	if err != nil {
		log.Fatal(err)
	}

	// Embed the texts that have no vector for this model yet, and store them.
	items, err := c.Unembedded(ctx, "letters", nil)
	if err != nil {
		log.Fatal(err)
	}
	vecs := make([][]float32, len(items))
	for i, it := range items {
		vecs[i] = embed(it.Text)
	}
	if err := c.PutEmbeddings(ctx, "letters", items, vecs); err != nil {
		log.Fatal(err)
	}

	// A hybrid search takes the query's vector from the same model.
	q := "will it rain"
	res, err := c.Search(ctx, q, catalog.SearchOptions{Embedding: embed(q), Model: "letters"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(items), "embedded; hybrid:", res.Hybrid)
	for _, r := range res.Results {
		fmt.Printf("%s/%s (%s)\n", r.Server, r.Name, r.Match)
	}
	// Output:
	// 1 embedded; hybrid: true
	// weather/get_forecast (text)
}

func ExampleCatalog_SearchAll() {
	dir, _ := os.MkdirTemp("", "catalog-example-")
	defer os.RemoveAll(dir)
	c, err := catalog.Open(filepath.Join(dir, "catalog.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for _, e := range []*catalog.Entry{
		{Server: "github", Hash: "h", Tools: []*mcp.Tool{
			{Name: "issue_create", Description: "Open a new issue in a repository."},
			{Name: "issue_list", Description: "List a repository's issues."},
		}},
		{Server: "files", Hash: "h", Tools: []*mcp.Tool{{Name: "write_file", Description: "Write text to a file."}}},
		{Server: "time", Hash: "h", Tools: []*mcp.Tool{{Name: "now", Description: "The current date and time."}}},
	} {
		if err := c.Put(ctx, e); err != nil {
			log.Fatal(err)
		}
	}
	// One need per query; the second implies today's date.
	queries := []string{"open an issue", "save the issue list to /tmp/issues.md by tomorrow"}
	res, err := c.SearchAll(ctx, queries, catalog.SearchOptions{Limit: 4})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range res.Results {
		why := queries[r.Need]
		if r.Implied != "" {
			why += " (implied: " + r.Implied + ")"
		}
		fmt.Printf("%s/%s for %q\n", r.Server, r.Name, why)
	}
	// Output:
	// github/issue_create for "open an issue"
	// github/issue_list for "save the issue list to /tmp/issues.md by tomorrow"
	// files/write_file for "save the issue list to /tmp/issues.md by tomorrow"
	// time/now for "save the issue list to /tmp/issues.md by tomorrow (implied: today's date)"
}
