package chromium

import (
	"context"
	"encoding/json"
	"fmt"
)

// A Page is a browser tab, attached in a session of its own.
type Page struct {
	b       *Browser
	session string
}

// A Frame is where a script runs: a page's main frame or one of its
// frames, in or out of the page's process.
type Frame struct {
	b       *Browser
	session string
	context int // the execution context; 0 for the session's main one
}

// Open opens a new tab at url, attaches to it and waits until its load
// event has fired. Frames that run in processes of their own (a sandboxed
// frame does, in Chromium) are attached as they come, so Page.Frame finds
// them.
func (b *Browser) Open(ctx context.Context, url string) (*Page, error) {
	var target struct{ TargetID string }
	if err := b.Call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return nil, fmt.Errorf("opening %s: %w", url, err)
	}
	var att struct{ SessionID string }
	if err := b.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		return nil, fmt.Errorf("opening %s: %w", url, err)
	}
	p := &Page{b: b, session: att.SessionID}
	for _, c := range []struct {
		method string
		params any
	}{
		{"Page.enable", nil},
		{"Runtime.enable", nil},
		{"Log.enable", nil},
		{"Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}},
		{"Page.navigate", map[string]any{"url": url}},
	} {
		if err := b.Call(ctx, p.session, c.method, c.params, nil); err != nil {
			return nil, fmt.Errorf("opening %s: %w", url, err)
		}
	}
	if _, err := b.WaitEvent(ctx, p.session, "Page.loadEventFired", nil); err != nil {
		return nil, fmt.Errorf("opening %s: %w", url, err)
	}
	return p, nil
}

// Main returns the page's main frame.
func (p *Page) Main() *Frame { return &Frame{b: p.b, session: p.session} }

// Frame returns the frame of the page's iframe element that selector
// finds: the session of the frame's own process if it runs in one, else an
// isolated world in the page's process (it sees the frame's DOM, not its
// scripts' variables).
func (p *Page) Frame(ctx context.Context, selector string) (*Frame, error) {
	frameID, err := p.frameID(ctx, selector)
	if err != nil {
		return nil, err
	}
	var targets struct {
		TargetInfos []struct {
			TargetID, Type string
		}
	}
	if err := p.b.Call(ctx, "", "Target.getTargets", nil, &targets); err != nil {
		return nil, fmt.Errorf("finding frame %s: %w", selector, err)
	}
	for _, ti := range targets.TargetInfos {
		if ti.Type != "iframe" || ti.TargetID != frameID {
			continue
		}
		params, err := p.b.WaitEvent(ctx, p.session, "Target.attachedToTarget", func(raw json.RawMessage) bool {
			var e struct{ TargetInfo struct{ TargetID string } }
			return json.Unmarshal(raw, &e) == nil && e.TargetInfo.TargetID == frameID
		})
		if err != nil {
			return nil, fmt.Errorf("finding frame %s: %w", selector, err)
		}
		var e struct{ SessionID string }
		if err := json.Unmarshal(params, &e); err != nil {
			return nil, fmt.Errorf("finding frame %s: %w", selector, err)
		}
		return &Frame{b: p.b, session: e.SessionID}, nil
	}
	var world struct{ ExecutionContextID int }
	if err := p.b.Call(ctx, p.session, "Page.createIsolatedWorld", map[string]any{"frameId": frameID, "worldName": "switchboard-test"}, &world); err != nil {
		return nil, fmt.Errorf("finding frame %s: %w", selector, err)
	}
	return &Frame{b: p.b, session: p.session, context: world.ExecutionContextID}, nil
}

// Eval evaluates expr in f, awaits it if it is a promise, and decodes its
// value (as JSON) into out, if not nil. A thrown exception is an error.
func (f *Frame) Eval(ctx context.Context, expr string, out any) error {
	params := map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}
	if f.context != 0 {
		params["contextId"] = f.context
	}
	var res struct {
		Result struct {
			Value json.RawMessage
		}
		ExceptionDetails *struct {
			Text      string
			Exception struct{ Description string }
		}
	}
	if err := f.b.Call(ctx, f.session, "Runtime.evaluate", params, &res); err != nil {
		return fmt.Errorf("evaluating %q: %w", expr, err)
	}
	if e := res.ExceptionDetails; e != nil {
		return fmt.Errorf("evaluating %q: %s %s", expr, e.Text, e.Exception.Description)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(res.Result.Value, out); err != nil {
		return fmt.Errorf("evaluating %q: decoding %s: %w", expr, res.Result.Value, err)
	}
	return nil
}

// Click presses and releases the left mouse button at (x, y) of the page's
// viewport, as a user does: the browser sends the events to whatever frame
// is there.
func (p *Page) Click(ctx context.Context, x, y float64) error {
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		ev := map[string]any{"type": typ, "x": x, "y": y}
		if typ != "mouseMoved" {
			ev["button"] = "left"
			ev["clickCount"] = 1
		}
		if err := p.b.Call(ctx, p.session, "Input.dispatchMouseEvent", ev, nil); err != nil {
			return fmt.Errorf("clicking at (%g, %g): %w", x, y, err)
		}
	}
	return nil
}

// frameID returns the id of the frame of the iframe element selector finds.
func (p *Page) frameID(ctx context.Context, selector string) (string, error) {
	var obj struct {
		Result struct{ ObjectID, Subtype string }
	}
	expr := fmt.Sprintf("document.querySelector(%q)", selector)
	if err := p.b.Call(ctx, p.session, "Runtime.evaluate", map[string]any{"expression": expr}, &obj); err != nil {
		return "", fmt.Errorf("finding frame %s: %w", selector, err)
	}
	if obj.Result.ObjectID == "" || obj.Result.Subtype != "node" {
		return "", fmt.Errorf("finding frame %s: no such element", selector)
	}
	var node struct {
		Node struct{ FrameID string }
	}
	if err := p.b.Call(ctx, p.session, "DOM.describeNode", map[string]any{"objectId": obj.Result.ObjectID}, &node); err != nil {
		return "", fmt.Errorf("finding frame %s: %w", selector, err)
	}
	if node.Node.FrameID == "" {
		return "", fmt.Errorf("finding frame %s: the element has no frame", selector)
	}
	return node.Node.FrameID, nil
}
