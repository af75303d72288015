package testserver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Instructions are the good server's instructions.
const Instructions = "Fixture server for switchboard tests."

type echoArgs struct {
	Text string `json:"text"`
}

type slowArgs struct {
	Millis int `json:"millis"`
}

type recordArgs struct {
	File string `json:"file"`
	Line string `json:"line,omitempty"` // what to append; "called" if empty (optional: other tests leave it out)
	Then string `json:"then"`           // "", "fail", "hang", "crash", or "wait" (until cancelled, then append "cancelled")
}

type gateArgs struct {
	Fifo string `json:"fifo"`
}

type sizeArgs struct {
	Bytes int `json:"bytes"`
}

// serveGood serves a well-behaved go-sdk server over stdio.
// extra, if any, adds more to it.
func serveGood(extra ...func(*mcp.Server)) error {
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver", Version: "1"}, &mcp.ServerOptions{Instructions: Instructions})
	addTools(s)
	for _, f := range extra {
		f(s)
	}
	s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name"}}},
		func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user",
				Content: &mcp.TextContent{Text: "hello " + r.Params.Arguments["name"]}}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://static", Name: "static", MIMEType: "text/plain"},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "static text"}}}, nil
		})
	return s.Run(context.Background(), &mcp.StdioTransport{})
}

// serveRoots serves a go-sdk server over stdio whose one tool, "roots",
// lists the client's roots, one URI a line, or says "no roots". It asks
// for them as an input request (SEP-2322), which go-sdk turns into
// roots/list for a client before 2026-07-28.
func serveRoots() error {
	s := mcp.NewServer(&mcp.Implementation{Name: "testserver-roots", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "Lists the client's roots, one URI a line, or says \"no roots\", or \"no roots capability\" when the client did not declare roots."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if p := req.Session.InitializeParams(); p != nil && (p.Capabilities == nil || p.Capabilities.RootsV2 == nil) {
				return text("no roots capability"), nil, nil
			}
			res, ok := req.Params.InputResponses["roots"].(*mcp.ListRootsResult)
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}}, nil, nil
			}
			if len(res.Roots) == 0 {
				return text("no roots"), nil, nil
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return text(strings.Join(uris, "\n")), nil, nil
		})
	return s.Run(context.Background(), &mcp.StdioTransport{})
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func addTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return text(a.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Waits millis, or until cancelled."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a slowArgs) (*mcp.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(a.Millis) * time.Millisecond):
				return text("done"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Never answers."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			select {}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits mid-call."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "panic: fixture crashed on purpose")
			os.Exit(2)
			return nil, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Answers with bytes of text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a sizeArgs) (*mcp.CallToolResult, any, error) {
			return text(strings.Repeat("x", a.Bytes)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn", Description: "Starts a grandchild and returns its pid."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return spawnSleeper(nil)
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add-tool", Description: "Adds a tool named after text; the server sends tools/list_changed."},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			mcp.AddTool(s, &mcp.Tool{Name: a.Text, Description: "Added."},
				func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
					return text("added"), nil, nil
				})
			return text("ok"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "record", Description: "Appends a line (line, or \"called\") to file, then answers, fails, hangs or crashes as then says."},
		func(ctx context.Context, _ *mcp.CallToolRequest, a recordArgs) (*mcp.CallToolResult, any, error) {
			f, err := os.OpenFile(a.File, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
			if err != nil {
				return nil, nil, err
			}
			line := a.Line
			if line == "" {
				line = "called"
			}
			// One write of a short line with O_APPEND: lines from several
			// processes recording into one file do not interleave.
			_, err = f.WriteString(line + "\n")
			f.Close()
			if err != nil {
				return nil, nil, err
			}
			switch a.Then {
			case "fail":
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "record failed as asked"}}}, nil, nil
			case "hang":
				select {}
			case "crash":
				os.Exit(3)
			case "wait":
				<-ctx.Done()
				if f, err := os.OpenFile(a.File, os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
					f.WriteString("cancelled\n")
					f.Close()
				}
				return nil, nil, ctx.Err()
			}
			return text("recorded"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Returns the server's pid."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(os.Getpid())), nil, nil
		})
}

// addGate adds the tools of mode Gated.
func addGate(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "progress-as", Description: "Sends a progress notification under each of the given tokens, as if for calls it was never given (a hostile server's forgery)."},
		func(ctx context.Context, req *mcp.CallToolRequest, a struct {
			Tokens []string `json:"tokens"`
		}) (*mcp.CallToolResult, any, error) {
			for _, tok := range a.Tokens {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Message: "forged"})
			}
			return text("sent"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "gate", Description: "Reports progress (when asked to), then answers once a writer has opened and closed the named pipe fifo; fails if cancelled first."},
		func(ctx context.Context, req *mcp.CallToolRequest, a gateArgs) (*mcp.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Message: "waiting at the gate"})
			}
			opened := make(chan error, 1)
			go func() { _, err := os.ReadFile(a.Fifo); opened <- err }()
			select {
			case err := <-opened:
				if err != nil {
					return nil, nil, err
				}
				return text("through the gate"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
}

// addSpawnAway adds the tool of mode Away.
func addSpawnAway(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "spawn-away", Description: "Starts a grandchild in a process group of its own (on Unix) and returns its pid."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return spawnSleeper(awayAttr())
		})
}

// spawnSleeper starts a grandchild that sleeps until killed, with attr,
// and answers with its pid.
func spawnSleeper(attr *syscall.SysProcAttr) (*mcp.CallToolResult, any, error) {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), Env+"="+Sleeper)
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return text(fmt.Sprint(cmd.Process.Pid)), nil, nil
}
