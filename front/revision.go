package front

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk writes the cache hints of 2026-07-28 (ttlMs and cacheScope,
// SEP-2549) on every listing and resource read, whatever the revision the
// client negotiated. A client of 2025-11-25 has no such fields in its
// schema, and a strict one refuses the result; revisionFields takes them out
// of what such a session is answered.
func (s *Server) revisionFields(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if _, ok := res.(mcp.CacheableResult); !ok || err != nil {
			return res, err
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ss == nil {
			return res, err
		}
		if p := ss.InitializeParams(); p == nil || p.ProtocolVersion >= "2026-07-28" {
			return res, err
		}
		return withoutCacheHints{res}, nil
	}
}

// withoutCacheHints is a result written without ttlMs and cacheScope.
// Embedding the result keeps it a result for go-sdk.
type withoutCacheHints struct{ mcp.Result }

// filterTools returns res, a tools/list result that revisionFields may
// have wrapped, with only the tools keep keeps, wrapped as it was; res
// itself when it is not such a result.
func filterTools(res mcp.Result, keep func(*mcp.Tool) bool) mcp.Result {
	inner := res
	wrapped, hinted := res.(withoutCacheHints)
	if hinted {
		inner = wrapped.Result
	}
	list, ok := inner.(*mcp.ListToolsResult)
	if !ok {
		return res
	}
	kept := make([]*mcp.Tool, 0, len(list.Tools))
	for _, t := range list.Tools {
		if keep(t) {
			kept = append(kept, t)
		}
	}
	cp := *list
	cp.Tools = kept
	if hinted {
		return withoutCacheHints{&cp}
	}
	return &cp
}

func (r withoutCacheHints) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, err
	}
	delete(fields, "ttlMs")
	delete(fields, "cacheScope")
	return json.Marshal(fields)
}
